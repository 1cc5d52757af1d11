"""How a command knows what changed in the store folder without reading every file.

- `monitor.py`: a background process per store (`pcp monitor start`) that watches the folders
  and hands each command a token of what changed since the last one asked;
- `watch.py`: the inotify watch of the folders under `pages/` a long-lived process keeps
  (`pcp serve`), so its refresh looks only at the files named after a change;
- `revisions_watch.py`: the monitor's watch on `revisions/` (which page folders gained or
  lost a file, for `pcp status`).

The catalog (`store/catalog.py`, `Catalog.refresh`) asks them first and falls back to a stat
scan of every head file when none can vouch; `store/refresh.py` then records the hand edits
found.
"""
