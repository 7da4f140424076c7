// The pages' few lines of script: local times, countdowns, the sortable
// games table, the live part of a game's page. Everything works without it
// (UTC times, ?sort= links, a reload for the news).
"use strict";

function judgeLocalTimes(root) {
  // Each <time> shows UTC; the reader's own zone is added beside it.
  for (const t of root.querySelectorAll("time[datetime]")) {
    if (t.dataset.local) continue;
    const d = new Date(t.getAttribute("datetime"));
    if (isNaN(d)) continue;
    t.dataset.local = "1";
    t.title = t.textContent;
    t.textContent = d.toLocaleString(undefined, {dateStyle: "medium", timeStyle: "short"}) + " (" + t.title + ")";
  }
}

function judgeCountdowns() {
  for (const t of document.querySelectorAll("time[data-countdown]")) {
    let span = t.nextElementSibling;
    if (!span || !span.classList.contains("countdown")) {
      span = document.createElement("span");
      span.className = "countdown";
      t.after(span);
    }
    let s = Math.floor((new Date(t.getAttribute("datetime")) - Date.now()) / 1000);
    if (s <= 0) { span.textContent = " (passed)"; continue; }
    const d = Math.floor(s / 86400); s %= 86400;
    const h = Math.floor(s / 3600); s %= 3600;
    const m = Math.floor(s / 60); s %= 60;
    span.textContent = " (in " + (d ? d + "d " : "") + h + "h " + String(m).padStart(2, "0") + "m " +
      String(s).padStart(2, "0") + "s)";
  }
}

function judgeSortable(table) {
  // A click on a header sorts by that column, a second click reverses.
  const heads = table.querySelectorAll("thead th");
  heads.forEach((th, col) => {
    th.querySelector("a").addEventListener("click", (ev) => {
      ev.preventDefault();
      const down = th.getAttribute("aria-sort") === "ascending";
      heads.forEach((h) => h.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", down ? "descending" : "ascending");
      const number = th.dataset.type === "number";
      const body = table.tBodies[0];
      const rows = Array.from(body.rows);
      const value = (r) => r.cells[col].dataset.value;
      rows.sort((a, b) => {
        const x = value(a), y = value(b);
        if (x === "" || y === "") return (x === "") - (y === "");  // no deadline: last either way
        const c = number ? Number(x) - Number(y) : x.localeCompare(y);
        return down ? -c : c;
      });
      rows.forEach((r) => body.appendChild(r));
    });
  });
}

function judgeLive(box) {
  // Polls the game's live part; swaps it in when its version changes.
  // A resolved game changes no more: no polling.
  const url = "/game/" + encodeURIComponent(box.dataset.game) + "/live";
  if (box.dataset.state === "resolved") return;
  async function poll() {
    try {
      const r = await fetch(url, {cache: "no-store"});
      if (r.ok) {
        const data = await r.json();
        if (data.version !== box.dataset.version) {
          box.innerHTML = data.html;
          box.dataset.version = data.version;
          judgeLocalTimes(box);
          judgeCountdowns();
        }
        box.dataset.state = data.state;
        if (data.state === "resolved") return;
      }
    } catch (e) { /* the server restarting: try again at the next beat */ }
    setTimeout(poll, 2000);
  }
  setTimeout(poll, 2000);
}

judgeLocalTimes(document);
judgeCountdowns();
setInterval(judgeCountdowns, 1000);
for (const t of document.querySelectorAll("table.sortable")) judgeSortable(t);
