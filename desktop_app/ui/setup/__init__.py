"""Setting Folio up: the first-run panel and flow for missing models, and the settings dialog."""
