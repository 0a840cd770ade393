# SPDX-License-Identifier: GPL-2.0-or-later
"""The cases of umockdev-detect.py, one module each: run(scsitune, workdir, guards)."""
