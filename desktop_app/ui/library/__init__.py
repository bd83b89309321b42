"""The library pane: the tree of opened folders and their documents, the banner when the
library file cannot be used, and the watcher that re-indexes changed folders."""
