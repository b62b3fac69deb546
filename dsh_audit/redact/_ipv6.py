"""IPv6 addresses' placeholders: an address as long as it in a block that names no one's machine (RFC 3849's
documentation prefix, RFC 6666's discard-only one, ``::/4``: :func:`reserved_ipv6`), the one an address is given first
and the others it may take, best first (:func:`ipv6_draws`: :meth:`._redactor.Redactor.distinct` gives the first no
other host was given, then every placeholder of a form in turn, so none goes unused). An IPv4 address ending one takes
the placeholder of :mod:`._addresses`' blocks it is given. Pure functions of the salted draws they are given:
:mod:`._hosts` draws them.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
from collections.abc import Callable, Iterator

from ._addresses import REDRAWS
from ._redactor import Every

__all__ = ["ipv6", "ipv6_draws", "is_ipv6", "reserved_ipv6"]

_HEX_DIGITS = "0123456789abcdef"

#: The heads before an IPv4 address that ends an IPv6 one which only say how it is carried (RFC 4291's mapped
#: and compatible forms, RFC 6052's NAT64 prefixes, RFC 6145's translated form): kept, the IPv4 address taking
#: its own placeholder, so ``::ffff:10.0.0.7`` reads as ``10.0.0.7`` does.
_EMBEDDING = frozenset({"::", "::ffff:", "::ffff:0:", "64:ff9b::", "64:ff9b:1::"})
#: The forms an IPv6 placeholder of a given length takes, the first that fits: a prefix, 0 or more groups of 1-4
#: hex digits within a range, each followed by ``:`` (a head before an IPv4 address) or joined by ``:``, and
#: a suffix. RFC 3849's documentation prefix ``2001:db8::/32`` (``0db8`` for one character more) for 11
#: characters or more; RFC 6666's discard-only ``100::/64`` for 6 to 10; ``::/4``, which the IETF keeps
#: reserved (``h::``, ``hh::``, ``hhh::``), for the shortest. No one's machine has one. A form of no hex digit
#: (``2001:db8::``, ``100::``) comes after the others: it holds a single address. The forms after the
#: first that fits hold the placeholders of addresses whose first one was taken (:func:`reserved_ipv6`
#: ``layout``): ``100::h:h``, ``0:hhhh::``, and ``hhh::``, in ``::/4``, all of which the IETF keeps reserved
#: (never ``hhhh::``).
_LAYOUTS = ((("2001:db8::", 0, 5, ""), ("2001:db8:", 6, 6, ""), ("2001:0db8:", 6, 6, ""), ("100::", 0, 1, ""),
             ("", 1, 1, "::"), ("100::", 2, 4, ""), ("0:", 1, 1, "::")),
            (("2001:db8::", 0, 3, ""), ("2001:0db8::", 0, 0, ""), ("2001:db8:", 4, 4, ""), ("2001:0db8:", 4, 4, ""),
             ("100::", 0, 1, ""), ("0:", 1, 1, "::"), ("", 1, 1, "::")))


def is_ipv6(text: str) -> bool:
    """Whether ``text`` is an IPv6 address :mod:`ipaddress` reads (no zone, no brackets).

    Example:
        >>> is_ipv6("fd00::1"), is_ipv6("::ffff:10.0.0.7"), is_ipv6("[fd00::1]"), is_ipv6("gw:1")
        (True, True, False, False)
    """
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _drawn_part(address: str) -> tuple[int, bool] | None:
    """The width of the part of an IPv6 ``address`` (not ``::`` or ``::1``) whose hex digits are drawn, and whether
    it is the head before an IPv4 address ending it (drawn with its ``:``): the whole address, that head, or None
    when that head is one of :data:`_EMBEDDING`, kept."""
    if "." not in address:
        return len(address), False
    head = address[:address.rfind(":") + 1]
    return None if head.lower() in _EMBEDDING else (len(head), True)


def ipv6(address: str, digits: str, ipv4: Callable[[str], str], *, layout: int = 0) -> str | None:
    """The placeholder of an IPv6 address (with no zone), as long as it, in a block that names no one's
    machine, its hex digits from ``digits`` and its form the ``layout``-th that fits (:func:`reserved_ipv6`);
    the loopback address ``::1`` and ``::`` stay (however written), and an IPv4 address ending it takes its
    placeholder ``ipv4``, after its head (kept when it is one of :data:`_EMBEDDING`): ``::ffff:127.0.0.1`` is
    redacted as ``127.0.0.1`` is, a loopback address still (whatever :mod:`ipaddress` of the running Python
    calls it). None when ``address`` is no IPv6 address.

    Example:
        >>> [ipv6(a, "abcdef", lambda quad: "192.0.2.1") for a in ("2a00:1450::1", "::1", "::ffff:10.0.0.1", "gw")]
        ['2001:db8::ab', '::1', '::ffff:192.0.2.1', None]
    """
    try:
        if int(ipaddress.IPv6Address(address)) in (0, 1):
            return address
    except ValueError:
        return None
    part = _drawn_part(address)
    at = address.rfind(":") + 1 if "." in address else len(address)  # where its IPv4 address starts
    head = address[:at] if part is None else reserved_ipv6(part[0], digits, head=part[1], layout=layout)
    return head + (ipv4(address[at:]) if at < len(address) else "")


def ipv6_draws(address: str, draw: Callable[[int], str],
               ipv4: Callable[[str], str]) -> tuple[Iterator[str] | Every, ...] | None:
    """The placeholders an IPv6 ``address`` may take, best first, in eight stages
    (:meth:`._redactor.Redactor.distinct`), in each of four forms of :data:`_LAYOUTS` that fit:
    :data:`._addresses.REDRAWS` of :func:`ipv6` of its salted draws of hex digits ``draw(0)``, ``draw(1)``..., each
    drawn from the whole address (:meth:`._plain.PlainPlaceholders.hex_digits`: two addresses of one network collide
    no more than any two), then every placeholder of that form in turn (:func:`_every_ipv6`, an
    :class:`._redactor.Every`: none goes unused); None when it is no IPv6 address.

    Example:
        >>> stages = ipv6_draws("fd00::1", lambda n: "0123456789"[n % 10:] + "0123456789", lambda quad: quad)
        >>> [next(stages[0]) for _ in range(2)], len(stages), ipv6_draws("gw:1", str, str)
        (['100::01', '100::12'], 8, None)
        >>> block = stages[1]
        >>> block.key, list(itertools.islice(block.placeholders(), 3))
        (('ipv6', 7, False, ('100::', 1, 2, ''), ''), ['100::00', '100::01', '100::02'])
    """
    if not is_ipv6(address):
        return None

    def drawn(layout: int) -> Iterator[str]:
        for attempt in range(layout * REDRAWS, (layout + 1) * REDRAWS):
            yield ipv6(address, draw(attempt), ipv4, layout=layout) or address

    def every(layout: int) -> Every:
        part = _drawn_part(address)
        tail = address[address.rfind(":") + 1:] if part is not None and part[1] else ""
        key = ("ipv6", *part, _form(*part, layout), tail) if part is not None else ("ipv6", address)
        return Every(key, lambda: _every_ipv6(address, ipv4, layout=layout))

    return tuple(stage for layout in range(4) for stage in (drawn(layout), every(layout)))


def _every_ipv6(address: str, ipv4: Callable[[str], str], *, layout: int) -> Iterator[str]:
    """Every placeholder :func:`ipv6` gives ``address`` in its ``layout``-th form, in turn, its hex digits counted
    up from zeros (a form of 3 characters, ``h::``, holds 15: not ``0::``, below); ``address`` itself, once,
    when it stays (``::1``) or its head is kept (``::ffff:``, its IPv4 address's placeholder after it).

    Example:
        >>> list(itertools.islice(_every_ipv6("2a00::1", str, layout=0), 3))
        ['100::00', '100::01', '100::02']
        >>> len(list(_every_ipv6("1::", str, layout=0)))
        15
    """
    part = _drawn_part(address)
    form = None if part is None or int(ipaddress.IPv6Address(address)) in (0, 1) else _form(*part, layout)
    count = 0 if form is None else form[2]
    seen = None
    for digits in itertools.product(_HEX_DIGITS, repeat=count):
        placeholder = ipv6(address, "".join(digits), ipv4, layout=layout) or address
        if placeholder != seen:  # all zeros is written as the next form (``0::`` as ``1::``): not twice in a row
            yield placeholder
        seen = placeholder


@functools.lru_cache(maxsize=512)
def _form(width: int, head: bool, layout: int) -> tuple[str, int, int, str] | None:
    """The ``layout``-th (modulo their number) of the forms of :data:`_LAYOUTS` an address of ``width`` characters
    (with ``head``, the head before an IPv4 address) fits: its prefix, its groups of hex digits, how many digits
    and its suffix. Kept once made (every draw of an address reads it)."""
    fits = []
    for prefix, fewest, most, suffix in _LAYOUTS[head]:
        for groups in range(fewest, most + 1):
            count = width - len(prefix) - len(suffix) - (groups if head and not suffix else max(groups - 1, 0))
            if groups <= count <= 4 * groups and (prefix or count < 4):  # ``hhhh::`` may be a global address
                fits.append((prefix, groups, count, suffix))
    fits.sort(key=lambda fit: fit[2] == 0)  # a form of no digit (``2001:db8::``) holds one address: last
    return fits[layout % len(fits)] if fits else None  # never None: every width an address can have has one


def reserved_ipv6(width: int, digits: str, *, head: bool, layout: int = 0) -> str:
    """An IPv6 address of ``width`` characters (3 to 39), or with ``head`` the part of one before an IPv4
    address (2 to 30, ending ``:``), in the ``layout``-th (modulo their number) of the forms of
    :data:`_LAYOUTS` it fits (:func:`_form`), its hex digits taken from ``digits`` in turn: the first, unless a
    placeholder of it was given to another address already (:func:`._hosts.redact_host`). A form whose prefix
    is zeros (``h::``, ``0:h::``) never takes only zeros: ``0::`` is ``::``, the unspecified address (which
    stays itself, as ``::ffff:`` heads do: review 40), so its last zero becomes the first other digit drawn.

    Example:
        >>> [reserved_ipv6(n, "0123456789abcdef", head=False) for n in (3, 7, 10, 16, 39)]
        ['1::', '100::01', '100::01:23', '2001:db8::012:34', '2001:0db8:0123:4567:89ab:cdef:0123:4567']
        >>> [reserved_ipv6(n, "abc", head=True) for n in (3, 6, 8, 12)]
        ['a::', '0:ab::', '100::ab:', '2001:db8::a:']
        >>> [reserved_ipv6(5, "abc", head=False, layout=n) for n in range(4)], reserved_ipv6(5, "000", head=False)
        (['abc::', '0:a::', '100::', 'abc::'], '001::')
    """
    form = _form(width, head, layout)
    if form is None:
        return digits[:width]  # never so: every width an address of the form can have fits one layout
    prefix, groups, count, suffix = form
    sizes = [count // groups + (i < count % groups) for i in range(groups)]
    hexes = (digits * (count // max(len(digits), 1) + 1))[:count]
    if not prefix.strip("0:") and not hexes.strip("0"):  # ``0::``, ``0:0::``: the unspecified address
        hexes = hexes[:-1] + next((d for d in digits if d != "0"), "1")
    parts = [hexes[sum(sizes[:i]):sum(sizes[:i + 1])] for i in range(groups)]
    return prefix + ("".join(p + ":" for p in parts) if head and not suffix else ":".join(parts)) + suffix
