"""The search pipeline: request → resolve → compile → execute → fuse → render."""
