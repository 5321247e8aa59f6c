"""The catalog: collections, views, conf and packages, validated as a whole at load time."""
