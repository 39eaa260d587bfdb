"""Kinds of value a standing rule chooses among: carrier, payment method, seat, ...

"平时都寄顺丰" and "这次发EMS就行" share no word, yet the second overrides the
first: both name a courier. Lexical overlap cannot see that; knowing that two
values are alternatives of one kind can. Each kind lists its alternatives
(zh and en spellings of one alternative share a name, so "飞机" and "flight"
are the same choice). The lists are of the world's common options, not of
any conversation's words; an unknown alternative simply falls back to the
lexical rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache


def _alternatives(*pairs: tuple[str, str]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    # Latin spellings need letter boundaries that hold next to Chinese characters
    # ("发EMS就行"), where \b does not.
    return tuple(
        (name, re.compile(rf"(?<![A-Za-z])(?:{pattern})(?![A-Za-z])", re.IGNORECASE))
        for name, pattern in pairs
    )


KINDS: Mapping[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    "carrier": _alternatives(
        ("sf", r"顺丰|SF Express"), ("ems", r"EMS|中国邮政|邮政"), ("zto", r"中通"),
        ("yto", r"圆通"), ("sto", r"申通"), ("yunda", r"韵达"), ("jd", r"京东(?:快递|物流)"),
        ("jt", r"极兔"), ("deppon", r"德邦"), ("ups", r"UPS"), ("fedex", r"FedEx"),
        ("dhl", r"DHL"), ("usps", r"USPS"), ("royal-mail", r"Royal Mail"),
    ),
    "shipping speed": _alternatives(
        ("express", r"(?:express|overnight) (?:shipping|delivery)|加急|次日达|特快"),
        ("standard", r"standard (?:shipping|delivery)|ground shipping|普通快递|平邮|标快"),
    ),
    "payment": _alternatives(
        ("alipay", r"支付宝|Alipay"), ("wechat-pay", r"微信支付|微信付|WeChat Pay"),
        ("credit-card", r"信用卡|credit card"), ("debit-card", r"借记卡|储蓄卡|debit card"),
        ("cash", r"现金|货到付款|cash(?: on delivery)?"), ("paypal", r"PayPal"),
        ("apple-pay", r"Apple Pay"),
        ("bank-transfer", r"银行转账|对公转账|(?:bank|wire) transfer"),
        ("invoice", r"月结|invoice"),
    ),
    "seat": _alternatives(
        ("window", r"靠窗|window seat"), ("aisle", r"靠过道|过道座|aisle seat"),
        ("middle", r"中间座|middle seat"),
    ),
    "cabin": _alternatives(
        ("economy", r"经济舱|economy(?: class)?"), ("premium", r"超级经济舱|premium economy"),
        ("business", r"商务舱|business class"), ("first", r"头等舱|first class"),
    ),
    "transport": _alternatives(
        ("rail", r"高铁|动车|火车|trains?|rail"), ("air", r"飞机|航班|flights?|fly|flying"),
        ("bus", r"大巴|长途车|bus|coach"), ("car", r"自驾|drive|driving|rental car"),
    ),
    "bed": _alternatives(
        ("large", r"大床|king(?:-size)? bed|queen bed|double bed"),
        ("twin", r"双床|twin beds?"),
    ),
}  # fmt: skip


@lru_cache(maxsize=8192)
def choices(text: str) -> Mapping[str, frozenset[str]]:
    """The alternatives `text` names, by kind: {"carrier": {"sf"}}."""
    found: dict[str, set[str]] = {}
    for kind, alternatives in KINDS.items():
        for name, pattern in alternatives:
            if pattern.search(text):
                found.setdefault(kind, set()).add(name)
    # "premium economy" also reads as "economy": the longer name is the choice.
    cabin = found.get("cabin")
    if cabin and {"premium", "economy"} <= cabin:
        cabin.discard("economy")
    return {kind: frozenset(names) for kind, names in found.items()}


def shared_kinds(a: str, b: str) -> list[str]:
    """Kinds of choice both texts name a value of."""
    ca, cb = choices(a), choices(b)
    return [kind for kind in ca if kind in cb]


def other_choice(old: str, new: str) -> str | None:
    """The kind on which `new` names an alternative `old` does not (None: none)."""
    ca, cb = choices(old), choices(new)
    for kind, names in cb.items():
        if kind in ca and names - ca[kind]:
            return kind
    return None
