"""Upkeep of a store folder, above its engine: `pcp doctor` (doctor.py: find and fix what is
wrong), `pcp validate` (validate.py: every file against the schemas) and the check every read
makes first (damage.py: a folder replaced by a file is damage, never "0 pages")."""
