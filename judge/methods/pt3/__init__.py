"""Payola Tic-Tac-Toe (PT3), the toy bidding game of ../shared/seeds/payola-bidding.html.

Two players, X and O, each with a balance; every season one mark is placed,
X and O in turn (X first); both bid for the right to choose the empty square
it goes on; the higher bid chooses, a tie goes to O, and only the winner pays.
X wins with three X in a row; otherwise O wins (also when the board is full).

`solver` computes the seed's victory condition A_X > b * A_O exactly
(fractions) for any position, and from two balances who wins with best play,
the bids that keep the win and the square to take. The mail game (the method
the judge runs) is not here yet: see issue 15 and docs/pt3.md.
"""
