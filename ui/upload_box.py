"""The Threads page's upload box, with the size limit written the way the README and SECURITY.md write it.

Streamlit writes a file uploader's limit itself, rounded to a whole unit once it is past 500 of the
smaller one (FileUploader's size formatter, Streamlit 1.67: `toFixed(0)` after going up a unit), so
512 MiB read "1GB per file" (issue 35). Its line is hidden by a fixed rule of our own (no thread or
user text reaches the CSS) and a caption states the limit the importers apply.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from engine.formats import upload_limit_mib

CSS = "<style>.st-key-uploader [data-testid=stFileUploaderDropzoneInstructions] {display: none;}</style>"


def upload_box(label: str) -> Any:
    """The transcript uploader (key `uploader`, several files at once) and its limit: CTXI_MAX_BYTES, 512 MiB
    by default, which is also the most the server takes (`ctxi ui` passes it as server.maxUploadSize)."""
    limit_mib = upload_limit_mib()
    st.html(CSS)
    files = st.file_uploader(label, key="uploader", accept_multiple_files=True, max_upload_size=limit_mib)
    st.caption(f"Up to {limit_mib:,} MiB per file.")
    return files


__all__ = ["CSS", "upload_box"]
