"""Special categories of personal data in what the person says of themselves.

Health, sexuality, gender identity, religion or belief, political opinion and racial or ethnic
origin (the GDPR's Article 9 list, less genetics and biometrics, which no sentence states): a
claim that states one is proposed at sensitivity `high` (never served by default, never in the
micro_prompt) and never fills a one-value slot such as the person's role, so "I'm a practising
Catholic." can never push "I'm a writer." out of the profile.

Two kinds of words: those that say it wherever they stand ("depression", "Catholic",
"bisexual"), and those that say it only as what the person is ("I'm straight", "I'm black",
"I'm a conservative"), since "straight to the point", "black coffee" and "a conservative
estimate" say nothing of anyone.
"""

from __future__ import annotations

import re

_ANYWHERE = {
    "health": (
        r"allergic|allergy|allergies|intolerant|intolerance|celiac|coeliac|diabetic|diabetes|"
        r"pregnant|pregnancy|miscarriage|adhd|autis\w*|asperger\w*|dyslexi\w*|dyspraxi\w*|"
        r"anxiety|panic attacks|depress(?:ion|ed)|bipolar|ptsd|ocd|schizophreni\w*|"
        r"eating disorder|anorexi\w*|bulimi\w*|insomnia|asthma|migraines?|epilep\w*|seizures?|"
        r"chronic (?:pain|illness|fatigue)|illness|disorder|disability|disabled|"
        r"cancer|tumou?r|chemo(?:therapy)?|leukemia|lymphoma|hiv|hepatitis|"
        r"heart (?:condition|disease|attack)|arthritis|tinnitus|long covid|"
        r"multiple sclerosis|parkinson'?s|alzheimer'?s|dementia|crohn'?s|ibs|endometriosis|"
        r"pcos|medication|antidepressants?|in therapy|my therapist|rehab|sober|sobriety|"
        r"recovering alcoholic|addiction|addicted|diagnosed|had surgery|wheelchair|"
        r"hard of hearing|deaf|had a stroke"),
    "religion": (
        r"catholic|catholicism|christian|christianity|protestant|evangelical|lutheran|"
        r"anglican|baptist|methodist|presbyterian|pentecostal|mormon|lds|jehovah'?s witness|"
        r"muslim|islam|islamic|jewish|judaism|hindu|hinduism|buddhist|buddhism|sikh|sikhism|"
        r"jain|taoist|pagan|wiccan|atheist|atheism|agnostic|religious|"
        r"church|mosque|synagogue|my faith|pray|praying|prayer|bible|quran|koran|torah|"
        r"ramadan|shabbat|sabbath|kosher|halal"),
    "sexuality": (
        r"gay|lesbian|bisexual|homosexual|heterosexual|asexual|pansexual|queer|lgbt\w*|"
        r"coming out|came out"),
    "gender identity": (
        r"transgender|transsexual|trans (?:woman|man|person|guy|girl)|non-?binary|enby|"
        r"genderqueer|genderfluid|gender[- ]fluid|cisgender|my pronouns|"
        r"(?:medical|gender) transition|hormone therapy|hrt"),
    "political opinion": (
        r"democrat|republican|tory|tories|labour voter|socialist|"
        r"communist|libertarian|leftist|left-wing|right-wing|marxist|anarchist|maga|"
        r"my politics|political views|party member"),
    "ethnicity": (
        r"ethnicity|latino|latina|latinx|hispanic|indigenous|aboriginal|"
        r"native american|first nations|biracial|mixed[- ]race|african[- ]american|"
        r"asian[- ]american|person of colou?r|poc|romani|roma"),
}
# Words that say it only as what the person is: "I'm straight", "I'm a conservative".
_AS_WHAT_I_AM = {
    "sexuality": r"straight|bi",
    "gender identity": r"trans|cis",
    "political opinion": r"conservative|liberal|progressive|centrist",
    "ethnicity": r"black|white|asian|arab|brown",
}
_ANYWHERE_RE = {kind: re.compile(rf"\b(?:{words})\b", re.I) for kind, words in _ANYWHERE.items()}
_AS_WHAT_RE = {
    kind: re.compile(rf"^(?:I'm|I am|Im|Is|As|Being)\s+(?:an?\s+)?(?:(?:proud|openly|out|"
                     rf"practi[cs]ing|devout|lifelong|committed)\s+)*(?:{words})"
                     rf"(?=\s*(?:[,.;:!)]|$|\s(?:and|but|so|too|now|myself|woman|man|person|"
                     rf"guy|girl|voter|couple|family)\b))", re.I)
    for kind, words in _AS_WHAT_I_AM.items()
}


def special_category(text: str) -> str | None:
    """The special category a first-person claim ("I have depression", "Is a practising
    Catholic") states, else None."""
    stripped = text.strip()
    for kind, pattern in _AS_WHAT_RE.items():
        if pattern.search(stripped):
            return kind
    for kind, pattern in _ANYWHERE_RE.items():
        if pattern.search(stripped):
            return kind
    return None
