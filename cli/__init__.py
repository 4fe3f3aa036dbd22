"""The ``gradviz`` command line, installed as the package ``gradviz_cli``.

The folder is called ``cli/`` in the repository but is packaged under the import name
``gradviz_cli`` (see ``[tool.setuptools.package-dir]`` in pyproject.toml), so no top-level
package named ``cli`` is ever installed. Import it as ``gradviz_cli``.
"""
