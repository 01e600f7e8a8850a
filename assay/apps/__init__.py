"""Applications built on assay's public API, as a user's would be."""
