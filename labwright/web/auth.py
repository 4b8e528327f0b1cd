"""Who sent a request: a bearer token (API clients) or the page's session cookie.

The cookie holds the person's token (HttpOnly, SameSite=Strict) and is checked on every
request like a bearer token, so a removed person is refused at once. A write made with the
cookie must also carry the ``X-Labwright`` header: a page of another site cannot add it (it
would need a CORS preflight this server never grants), so a forged form post is refused.
"""

from __future__ import annotations

from starlette.requests import Request

from labwright.identity import http_person
from state_store.people import NotAuthenticated, NotPermitted, People, Person

COOKIE = "labwright_token"
CSRF_HEADER = "x-labwright"


def person_of(request: Request, people: People) -> Person:
    """The person behind ``request``; :class:`NotAuthenticated` when nobody is."""
    header = request.headers.get("authorization")
    if header:
        return http_person(people, header)
    token = request.cookies.get(COOKIE)
    if not token:
        raise NotAuthenticated("sign in with your token (labwright people add NAME --role ...)")
    person = people.authenticate(token)
    if request.method not in ("GET", "HEAD") and request.headers.get(CSRF_HEADER) != "1":
        raise NotPermitted("a write from the page must carry the X-Labwright header")
    return person
