"""Who is named in a sentence: people, and the roles that introduce them.

Shared by extraction (a sentence naming a contact is worth keeping) and
scoring (a contact the user named once is a key reference, like an ID).
"""

from __future__ import annotations

import re
from functools import lru_cache

from policies.language.matching import word_set

# Someone's role or responsibility ("our contact is…", "对接人是…").
ROLE = re.compile(
    r"\bon call\b|\bowner\b|\bin charge\b|\bcontact\b|\bcounterpart\b|\bassign(?:ed)? to\b"
    r"|\breports? to\b|\bresponsible\b|\bdirector\b|\bmanager\b|\bpm\b|\blead\b|\bboss\b"
    r"|\bsigns? off\b|\bapprov\w+|\breviewer\b|\bstakeholder\b|\bclient\b|\bcustomer\b"
    r"|(?<![a-z])hr(?![a-z])|\brecruiter\b|\bdecides?\b|'s (?:call|decision)\b"
    r"|\bup to (?:him|her|them)\b"
    r"|\bdoctor\b|\bvet\b|\blawyer\b|\baccountant\b|\bagent\b|\blandlord\b"
    r"|负责|对接|联系人|经理|总监|主管|老板|审批|甲方|内推|说了算|决定|医生|会计|律师|顾问|中介|房东",
    re.IGNORECASE,
)
# A capitalised word (or run of them) that is not the sentence's first word.
_NAME = re.compile(
    r"(?:(?<=[\s(\"'“‘：:，,、])|(?<=[\u3400-\u9fff]))[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*"
)
# A Chinese name next to the role that introduces it ("同事刘思远", "王医生", "周敏周会计").
_ZH_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢"
    "姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
)
_ZH_ROLES = (
    r"同事|朋友|老板|经理|主管|领导|总监|医生|大夫|老师|会计|律师|顾问|中介|房东|师傅|教练|导师|学长|学姐"
    r"|同学|室友|闺蜜|总|工|助理|秘书|HR|经纪人|销售|房产顾问"
)
# Workplace roles that introduce a colleague by nickname ("前台小陈", "会计老孙").
_ZH_DESKS = r"前台|收银|库管|仓管|保安|司机|客服|设计|财务|行政|出纳|对接人|联系人|负责人"
_ZH_PERSON = re.compile(
    rf"(?:{_ZH_ROLES})(?:[，,]?叫|是)?[{_ZH_SURNAMES}][\u4e00-\u9fff]{{1,2}}"
    rf"|[{_ZH_SURNAMES}][\u4e00-\u9fff]?(?:{_ZH_ROLES})"
    # "小陈", "老孙": a surname with 小/老 is how colleagues are named, once a role
    # introduces them or they are said to be someone ("小陈是对接人", "找老孙").
    rf"|(?:{_ZH_ROLES}|{_ZH_DESKS}|找|问|联系|交给)(?:叫)?[小老][{_ZH_SURNAMES}]"
    rf"|[小老][{_ZH_SURNAMES}](?=是|负责|对接)"
)
_NOT_NAMES = word_set(
    """I I'm I'd I'll I've The A An And But So Oh Also Yes No Ok Okay Hi Hey Thanks Please
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May
    June July August September October November December English Chinese UTC"""
)


def person_names(text: str) -> list[str]:
    """Names in `text`: capitalised words past a sentence's start, Chinese names next
    to a role ("王医生", "前台小陈")."""
    found = [n for n in _NAME.findall(text) if n.split()[0] not in _NOT_NAMES]
    return found + _ZH_PERSON.findall(text)


@lru_cache(maxsize=8192)
def names_contact(text: str) -> bool:
    """Does `text` name someone in a role ("The lead artist is Ayesha Rahman", "物业的
    对接人是王经理")? That is who the user will need to reach, stated once."""
    return bool(ROLE.search(text)) and bool(person_names(text))
