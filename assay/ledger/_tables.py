"""SQLAlchemy Core tables of the ledger; migrations 0001 and 0006 create them."""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

runs = sa.Table(
    "ledger_runs",
    metadata,
    sa.Column("run_id", sa.String(64), primary_key=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("metadata_json", sa.Text(), nullable=False),
    sa.Column("head_seq", sa.Integer(), nullable=False),
    sa.Column("head_hash", sa.String(64), nullable=False),
    # The hash of the run record (id, creation time, metadata); every entry of
    # format 2 binds it into its own hash. Runs made before 0006 got it then.
    sa.Column("run_hash", sa.String(64), nullable=False),
)

entries = sa.Table(
    "ledger_entries",
    metadata,
    sa.Column("entry_id", sa.String(32), primary_key=True),
    sa.Column("run_id", sa.String(64), sa.ForeignKey("ledger_runs.run_id"), nullable=False),
    sa.Column("seq", sa.Integer(), nullable=False),
    sa.Column("kind", sa.String(32), nullable=False),
    sa.Column("source", sa.Text(), nullable=False),
    sa.Column("content", sa.LargeBinary(), nullable=False),
    sa.Column("is_text", sa.Boolean(), nullable=False),
    sa.Column("content_sha256", sa.String(64), nullable=False),
    sa.Column("metadata_json", sa.Text(), nullable=False),
    sa.Column("prev_hash", sa.String(64), nullable=False),
    sa.Column("entry_hash", sa.String(64), nullable=False),
    sa.Column("dedup_key", sa.String(64), nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    # 1: entries written before migration 0006 (the hash leaves out the content's
    # type, the creation time and the run record); 2: everything stored is hashed.
    sa.Column("format", sa.Integer(), nullable=False),
    # The entry's position in the Merkle log over the whole database (append order)
    # and the hashes of the complete subtrees that end at it, level 0 (the leaf) first.
    sa.Column("leaf_index", sa.BigInteger(), nullable=False),
    sa.Column("subtrees", sa.LargeBinary(), nullable=False),
)

#: One row: the Merkle log's size and frontier (the compact range), so an append
#: hashes its new subtrees without reading earlier leaves.
tree = sa.Table(
    "ledger_tree",
    metadata,
    sa.Column("id", sa.Integer(), primary_key=True),
    sa.Column("size", sa.BigInteger(), nullable=False),
    sa.Column("frontier", sa.LargeBinary(), nullable=False),
)
