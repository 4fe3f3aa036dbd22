"""One module per ``gradviz`` sub-command; each is registered in ``gradviz_cli.main``."""
