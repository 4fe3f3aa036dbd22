"""``python -m gradviz``: the same command line as the installed ``gradviz`` script."""

from gradviz_cli.main import app

if __name__ == "__main__":
    app(prog_name="gradviz")
