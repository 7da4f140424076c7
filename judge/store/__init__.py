"""The judge's database: SQLAlchemy 2 models, Alembic migrations, sessions."""
