"""The main window: its layout and state, actions and menus, the library and answer flows,
the status bar's indexing progress, small dialogs, app start and the scripted automation."""
