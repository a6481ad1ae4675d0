"""The text of a winning condition (``majority<0.7``) and the families of K it generalises the paper's eight from.

Grammar (case-insensitive, spaces ignored; VALUE is a decimal ``0.7``, a fraction
``7/10`` or a percentage ``70%``):

==================  ==========================  ===================================
text                K                           the winner (rho = own share)
==================  ==========================  ===================================
``majority``        101/100 (the paper's)       more than half of the discs
``majority<VALUE``  0.5 < K <= 1                more than half, but less than K
``minority>VALUE``  0 <= K < 0.5                less than half, but more than K
``minority``        -1/100 (the paper's)        less than half (``inverse``: the same)
``k=VALUE``         any K but 0.5               rho strictly between K and 0.5
==================  ==========================  ===================================

A turn limit is no part of the condition's text: it is a rule the agents see, given
beside it (``turns=10``; the paper's blitz conditions are ``majority`` and
``minority`` with 10 turns). :data:`FAMILIES` names the four ranges of K (and the
blitz variants) that ``arena envs new`` draws held-out conditions from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from engine.condition import HALF, Condition, ConditionError

PAPER_MAJORITY = Fraction(101, 100)
PAPER_MINORITY = Fraction(-1, 100)
ONE = Fraction(1)
_VALUE = r"([+-]?[0-9./]+%?)"
_FORMS = (
    (re.compile(rf"^majority<{_VALUE}$"), "majority<"),
    (re.compile(rf"^minority>{_VALUE}$"), "minority>"),
    (re.compile(rf"^k={_VALUE}$"), "k="),
)
GRAMMAR = "majority, minority (or inverse), majority<VALUE (0.5 < K <= 1), minority>VALUE (0 <= K < 0.5) or k=VALUE"


@dataclass(frozen=True)
class Family:
    """A range of K in which every K gives the same kind of goal, and the range held-out K are drawn from."""

    name: str
    draw_low: Fraction
    draw_high: Fraction
    blitz: bool = False

    def contains(self, k: Fraction) -> bool:
        """Whether ``k`` lies in the family's range (the draw range is a part of it)."""
        base = self.name.removesuffix("-blitz")
        if base == "majority":
            return k > ONE
        if base == "majority-below":
            return HALF < k <= ONE
        if base == "minority-above":
            return 0 <= k < HALF
        return k < 0


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (
        Family("majority", Fraction(1001, 1000), Fraction(3, 2)),
        Family("majority-below", Fraction(55, 100), Fraction(95, 100)),
        Family("minority-above", Fraction(5, 100), Fraction(45, 100)),
        Family("minority", Fraction(-1, 2), Fraction(-1, 1000)),
        Family("majority-blitz", Fraction(1001, 1000), Fraction(3, 2), blitz=True),
        Family("minority-blitz", Fraction(-1, 2), Fraction(-1, 1000), blitz=True),
    )
}
PAPER_KS = frozenset({PAPER_MAJORITY, PAPER_MINORITY, Fraction(4, 5), Fraction(3, 5), Fraction(2, 5), Fraction(1, 5)})


def parse_value(text: str, where: str) -> Fraction:
    """``0.7``, ``7/10`` or ``70%`` as an exact fraction; ConditionError naming ``where`` otherwise."""
    body, percent = (text[:-1], True) if text.endswith("%") else (text, False)
    try:
        value = Fraction(body)
    except (ValueError, ZeroDivisionError):
        raise ConditionError(f"{where}: {text!r} is not a number; write a decimal (0.7), a fraction (7/10) or a percentage (70%)") from None
    return value / 100 if percent else value


def parse_condition(text: str, turn_limit: int | None = None, turn_counting: str = "per_player") -> Condition:
    """The condition written as ``text`` (grammar in the module docstring), labelled with its canonical text.

    ConditionError naming the text and what would be right: an unknown form, a
    value that is not a number, K = 0.5, or K outside its family's range.
    """
    cleaned = re.sub(r"\s+", "", text).lower()
    where = f"condition {text!r}"
    if cleaned == "majority":
        k = PAPER_MAJORITY
    elif cleaned in ("minority", "inverse"):
        k = PAPER_MINORITY
    else:
        k = _parse_form(cleaned, where)
    if k == HALF:
        raise ConditionError(f"{where}: K=0.5 leaves no winning share; write majority<K (K above 0.5) or minority>K (K below 0.5)")
    condition = Condition(k, turn_limit, turn_counting)
    return Condition(k, turn_limit, turn_counting, condition_spec(condition))


def _parse_form(cleaned: str, where: str) -> Fraction:
    for pattern, head in _FORMS:
        match = pattern.match(cleaned)
        if not match:
            continue
        k = parse_value(match.group(1), where)
        if head == "majority<" and not HALF < k <= ONE:
            raise ConditionError(
                f"{where}: K={_number(k)} is outside majority<K's range 0.5 < K <= 1"
                + (
                    f" (for a share above {_number(k)} but below half, write minority>{_number(k)})"
                    if 0 <= k < HALF
                    else " (above 1: write majority)"
                )
            )
        if head == "minority>" and not 0 <= k < HALF:
            raise ConditionError(
                f"{where}: K={_number(k)} is outside minority>K's range 0 <= K < 0.5"
                + (
                    f" (for a share above half but below {_number(k)}, write majority<{_number(k)})"
                    if HALF < k <= ONE
                    else " (below 0: write minority)"
                )
            )
        return k
    raise ConditionError(f"{where} is not a condition: write {GRAMMAR}")


def condition_spec(condition: Condition) -> str:
    """The canonical text of a condition's K (no turn limit): ``parse_condition`` reads it back to the same K."""
    k = condition.k
    if k > ONE:
        return "majority" if k == PAPER_MAJORITY else f"k={_number(k)}"
    if k > HALF:
        return f"majority<{_number(k)}"
    if k >= 0:
        return f"minority>{_number(k)}"
    return "minority" if k == PAPER_MINORITY else f"k={_number(k)}"


def family_of(condition: Condition) -> str:
    """The name of the family (of :data:`FAMILIES`) ``condition`` belongs to; a turn limit makes it blitz."""
    for family in FAMILIES.values():
        if family.contains(condition.k) and family.blitz == (condition.turn_limit is not None):
            return family.name
    base = next(f.name for f in FAMILIES.values() if f.contains(condition.k))
    return f"{base}-limited"  # a turn limit on the two middle families: no paper counterpart


def _number(k: Fraction) -> str:
    """A finite decimal when K has one (0.734), else the fraction (1/3)."""
    denominator = k.denominator
    for prime in (2, 5):
        while denominator % prime == 0:
            denominator //= prime
    if denominator != 1:
        return f"{k.numerator}/{k.denominator}"
    places = 0
    while (k * 10**places).denominator != 1:
        places += 1
    if not places:
        return str(k.numerator)
    scaled = abs(k.numerator * 10**places // k.denominator)
    sign = "-" if k < 0 else ""
    return f"{sign}{scaled // 10**places}.{scaled % 10**places:0{places}d}"
