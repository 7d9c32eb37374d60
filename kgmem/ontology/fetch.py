"""Getting a manifest file's bytes: from the local mirror, else from its canonical URL.

Nothing is trusted until it is checked: size and sha256 must equal the manifest's before the
bytes are handed on. The network is used only here, only when a caller installs explicitly,
and only for files the mirror lacks. A ``duplicate_of`` copy is a stand-in: it is used only
when its primary cannot be had (mirror first for every candidate, then the network).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import httpx

from kgmem.errors import ChecksumMismatch, OntologyFileMissing
from kgmem.ontology.manifest import FileEntry, OntologyEntry
from kgmem.ontology.records import CatalogueOrigin

__all__ = ["FetchedFile", "Fetcher", "verify"]


@dataclass(frozen=True)
class FetchedFile:
    """Verified bytes of one manifest file and where they came from."""

    entry: FileEntry
    data: bytes
    origin: CatalogueOrigin

    @property
    def sha256(self) -> str:
        return self.entry.sha256 or hashlib.sha256(self.data).hexdigest()


def verify(entry: FileEntry, data: bytes, where: str) -> None:
    """Raise :class:`ChecksumMismatch` unless ``data`` is exactly the listed file."""
    actual = hashlib.sha256(data).hexdigest()
    expected_size = entry.size if entry.size is not None else len(data)
    if actual != entry.sha256 or len(data) != expected_size:
        raise ChecksumMismatch(where, entry.sha256 or "", actual, expected_size, len(data))


class Fetcher:
    """Resolves files against one mirror directory and, when allowed, the network.

    Use as a context manager: the HTTP client is opened on the first download only.
    """

    def __init__(self, mirror: Path | None, *, download: bool = True, timeout: float = 60) -> None:
        self._mirror = mirror
        self._download = download
        self._timeout = timeout
        self._client: httpx.Client | None = None

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def fetch(self, ontology: OntologyEntry, primary: FileEntry) -> FetchedFile:
        """The verified bytes of ``primary`` (or of a duplicate of it)."""
        candidates = (primary, *ontology.duplicates_of(primary.path))
        for candidate in candidates:
            found = self._from_mirror(candidate)
            if found is not None:
                return found
        failures: list[str] = []
        if self._mirror is not None:
            failures.append(f"not in the mirror {self._mirror}")
        if not self._download:
            failures.append("downloads are off")
        else:
            for candidate in candidates:
                try:
                    return self._from_url(candidate)
                except OntologyFileMissing as exc:
                    failures.append(exc.reason)
        raise OntologyFileMissing(primary.path, "; ".join(failures) or "no source")

    def _from_mirror(self, entry: FileEntry) -> FetchedFile | None:
        if self._mirror is None:
            return None
        path = self._mirror / entry.path
        if not path.is_file():
            return None
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise OntologyFileMissing(str(path), f"cannot be read: {exc.strerror or exc}") from exc
        verify(entry, data, str(path))
        return FetchedFile(entry, data, CatalogueOrigin.MIRROR)

    def _from_url(self, entry: FileEntry) -> FetchedFile:
        if entry.url is None:
            raise OntologyFileMissing(entry.path, "no url to download it from")
        if self._client is None:
            self._client = httpx.Client(follow_redirects=True, timeout=self._timeout)
        try:
            response = self._client.get(entry.url)
        except httpx.HTTPError as exc:
            reason = f"download from {entry.url} failed: {type(exc).__name__}: {exc}"
            raise OntologyFileMissing(entry.path, reason) from exc
        if response.status_code != httpx.codes.OK:
            reason = f"download from {entry.url} failed: HTTP {response.status_code}"
            raise OntologyFileMissing(entry.path, reason)
        verify(entry, response.content, f"{entry.path} (from {entry.url})")
        return FetchedFile(entry, response.content, CatalogueOrigin.URL)
