"""Alembic environment: the engine is handed in by judge.store.db.upgrade."""

from alembic import context

from judge.store.models import Base

config = context.config
engine = config.attributes.get("engine")
if engine is None:  # run from the alembic CLI: take the URL from the config
    from judge.methods.registry import load_models
    from judge.store.db import make_engine

    load_models()  # the methods' own tables too, for `alembic revision --autogenerate`
    engine = make_engine(config.get_main_option("sqlalchemy.url"))

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
