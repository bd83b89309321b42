"""The conversation pane: questions and their answers (the turn, its HTML, the pane), the
history of saved conversations, citation stepping, Markdown export and checking a text."""
