"""Walking a list operation page by page.

Every list of the API answers {"pagination": {..., "after": cursor}, "data":
[...]}; passing pagination.after as the next call's start walks the whole list
once, each item exactly once even while others are added.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping

__all__ = ["iterate"]



def iterate(list_method: Callable[..., Any], query: Mapping[str, Any] | None = None, **options: Any) -> Iterator[Any]:
    """Yields every item of a list operation, fetching page after page by cursor.

    list_method is a Client's list method (client.list_tokens,
    client.list_applications, ...) or client.search_tokens, whose body pages
    the same way; query its query or body (size sets the page size; page and
    start are the walk's own); options are passed to every call
    (api_key=..., timeout=...). Raises what the method raises, when the page
    that fails is fetched.

        for token in iterate(client.list_tokens, {"container": "/pci/", "size": 100}):
            ...
    """
    q = {k: v for k, v in (query or {}).items() if k not in ("page", "start")}
    while True:
        page = list_method(q, **options)
        yield from page.get("data") or []
        after = (page.get("pagination") or {}).get("after")
        if not after:
            return
        q["start"] = after
