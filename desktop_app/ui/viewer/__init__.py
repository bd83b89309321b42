"""The page viewer for every format: a PDF page with its highlight, a reflowable document
part, find in page, and aligning a cited passage with the page's text."""
