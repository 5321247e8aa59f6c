"""The write path: records, keyed-fact lanes, drafts, retraction and processing."""
