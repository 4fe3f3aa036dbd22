"""Example programs bundled with gradviz (``gradviz demo`` runs :mod:`gradviz.examples.intro`)."""
