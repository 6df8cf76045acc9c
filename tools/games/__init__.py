"""Rendered whole games: game scripts, per-frame tables and truth, frames a webcam would see, following."""
