"""Jupyter settings for the tutorials' kernels while `make docs` executes them.

scripts/docs_ext.py points ``JUPYTER_CONFIG_PATH`` here for the build only; nothing else reads
this file. mkdocs-jupyter runs each notebook through nbconvert, whose kernel manager reads it
(once per notebook, and the kernels read it too: it only sets values).
"""

import os

c = get_config()  # noqa: F821 - defined by Jupyter when it loads this file

# Local sockets, not TCP: over TCP every kernel warns that its traffic is not encrypted. The
# socket path must be absolute: a kernel starts in tutorials/ (so `import solutions` works)
# while nbconvert connects from the repository root, and a relative path names two places. The
# build makes a private folder for them and says where (scripts/docs_ext.py's on_config).
if "GRADVIZ_DOCS_KERNEL_SOCKETS" in os.environ:
    c.KernelManager.transport = "ipc"
    c.KernelManager.ip = os.environ["GRADVIZ_DOCS_KERNEL_SOCKETS"]

# nbclient gives a kernel 60 s to answer by default; on a busy 2-core machine (the test suite
# running beside the build) a kernel importing numpy and gradviz can take longer than that.
c.NotebookClient.startup_timeout = 600
