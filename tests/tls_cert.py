"""A self-signed certificate for loopback TLS servers, made with the ``openssl`` command (as a
model server's first start makes its own), or ``None`` when ``openssl`` is missing."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path


def self_signed(folder: Path) -> tuple[Path, Path] | None:
    """``(cert.pem, key.pem)`` for CN=localhost, valid one day, written under ``folder``."""
    if shutil.which("openssl") is None:
        return None
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key
