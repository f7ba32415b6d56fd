"""Secret redaction: everything openmemory stores or writes passes through `redact` first.

Three families, in ONE compiled pattern scanned once over the text:
- shapes: provider token prefixes, private-key PEM blocks and bare DER bodies, JWTs,
  credentials in URLs, cloud secret keys on their own (AWS 40-character secret keys,
  Azure account keys and client secrets, Google OAuth client secrets);
- words: a secret word (password, passphrase, secret, token, api key, ...) read with the
  few words after it, so "the staging password is hunter2" and "DB_PASSWORD=..." lose
  their value while "the password is wrong" keeps its words;
- context: a high-entropy value within two words of a secret word ("the deploy token
  qX8...") even without "is" or "=".
A false positive costs a few characters of a memory; a false negative copies a secret
into a database that outlives the transcript, so the rules lean towards redacting. Each
rule that keeps a look-alike (commit hashes, UUIDs, paths, base64 images, lockfile
digests, certificates) says how it is told apart; tests/test_redact.py holds the table.
"""
import base64
import json
import math
import re
from functools import lru_cache
from itertools import islice

# Words that name a secret. Plural and `_id`/`-file` style suffixes are read as the same word.
_SECRET_WORD = (r"(?:pass(?:word|wd|phrase)|pwd|secret(?:[ _\-]?(?:access[ _\-]?)?key)?|token|"
                r"api[ _\-]?key|apikey|access[ _\-]?key|private[ _\-]?key|auth[ _\-]?key|"
                r"client[ _\-]?secret|account[ _\-]?key|shared[ _\-]?access[ _\-]?key)")

# Every branch is one alternative of one pattern; its group name is the kind reported in
# [REDACTED:kind]. Order matters only between branches that can start at the same place.
# Branches over long character runs start with a look-behind, so a position inside a run
# fails at once and a long line costs one pass, not one pass per character.
_BRANCHES = [
    # A PEM block of any label; kept only when the label says it is public (certificates,
    # public keys: they are meant to be shared).
    ("pem", r"-----BEGIN (?P<pem_label>[A-Z0-9 ]{1,40})-----[\s\S]*?(?:-----END [A-Z0-9 ]{1,40}-----|\Z)"),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe_key", r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"),
    ("aws_access_key", r"\b(?:AKIA|ASIA|AROA|AIDA)[0-9A-Z]{16}\b"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("google_oauth", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    ("google_client_secret", r"\bGOCSPX-[A-Za-z0-9_\-]{20,}"),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("sendgrid_key", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    ("digitalocean_token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("shopify_token", r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
    # Azure AD client secrets: 3 characters, a digit, "Q~", then 31-34 more.
    ("azure_client_secret", r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_\-.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    # Azure SAS tokens: the signature parameter of a storage URL.
    ("azure_sas", r"(?<=[?&])sig=(?P<sas>[A-Za-z0-9%+/=]{20,})"),
    ("url_credentials", r"\b[a-zA-Z][a-zA-Z0-9+.\-]{0,20}://[^\s:/@]{1,100}:(?P<urlpw>[^\s@/]{1,200})@"),
    ("bearer", r"(?i:\b(?:bearer|basic))\s+(?P<bearer_value>[A-Za-z0-9_\-\.=+/]{12,})"),
    # A secret word (alone or inside an identifier such as DB_PASSWORD or apiToken) and what
    # follows it on the same line, up to 120 characters: `_words` decides what is the value.
    ("word", r"(?i:\b(?:[A-Za-z0-9]{0,30}?[_\-]?)" + _SECRET_WORD +
             r"(?:s|_[A-Za-z0-9_]{1,30}|-[A-Za-z0-9\-]{1,30})?\b)"),
    # A bare DER body (a PEM block without its armour): base64 of an ASN.1 SEQUENCE, "MI..",
    # "MH.." or "MC4..", over lines.
    ("der", r"(?<![A-Za-z0-9+/=])M[IHC][A-Za-z0-9+/]{40,}={0,2}(?:(?:\\n|\s){1,4}[A-Za-z0-9+/]{16,}={0,2})*"),
    # A bare OpenSSH private key body: base64 of "openssh-key-v1\0".
    ("openssh_key", r"\bb3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]*={0,2}(?:(?:\\n|\s){1,4}[A-Za-z0-9+/]{16,}={0,2})*"),
    # Azure storage account keys: 64 random bytes, 86 base64 characters and "==".
    ("azure_account_key", r"(?<![A-Za-z0-9+/=\-])[A-Za-z0-9+/]{86}==(?![A-Za-z0-9+/=])"),
    # AWS secret access keys: exactly 40 characters of [A-Za-z0-9/+], on their own.
    ("aws_secret_key", r"(?<![A-Za-z0-9+/=\-_.])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=\-_]|\.[A-Za-z0-9])"),
]
# Branches that keep their context and redact only one group.
_VALUE_GROUP = {"azure_sas": "sas", "url_credentials": "urlpw", "bearer": "bearer_value"}

# Values after a secret word that are clearly not secrets: numbers, placeholders, references.
_PLACEHOLDER = re.compile(
    r"^(?:[\d.,]+[kKmM]?|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*|%[A-Za-z_]+%?|\{\{.*|<[^>]*>?|\*+|x+|X+|\.\.\.|…|"
    r"null|nil|none|true|false|undefined|\[REDACTED[^\]]*\]?|process\.env\.[A-Za-z0-9_.]+|os\.environ.*|"
    r"(?:os\.)?getenv.*|env\(.*|secrets\.[A-Za-z0-9_.]+|vault:.*|op://.*|"
    # an attribute or call in code: settings.SECRET_KEY, args.token, get_password()
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*)?|[A-Za-z_][A-Za-z0-9_]*\(.*)$")
# Prose after "password is ...": a lowercase word from this list, or shaped like prose
# (-ed, -ing, -ly, ...), describes the secret rather than being it.
_PROSE = frozenset("""
a an the this that these those it its not no now still also just only already never always
in on at of for to from with by as into onto via per and or but if then so than too very
wrong incorrect invalid valid correct right missing required optional empty blank unset set
expired revoked rotated stale old new same different fine ok okay good bad weak strong short long
stored saved kept hidden masked redacted hashed encrypted salted managed handled defined configured
provided given passed sent read loaded generated created needed used shown printed logged leaked
changed reset unknown available unavailable present absent there here where what which who how why
being be been was were is are has have had should must will would can could may might
case sensitive insensitive per-user shared public private local global secret secure insecure
too-short mandatory supported unsupported ignored accepted rejected
""".split())
_PROSE_SUFFIX = re.compile(r"^[a-z]+(?:ed|ing|ly|able|ible|ment|tion|sion|ness|ous|ive|ful|less)$")
_CONNECTOR = re.compile(r"""^["']?(?:[ \t]+[\w.\-/']{1,20}){0,3}?\s*(?:[:=]{1,2}|=>|->|\bis\b|\bwas\b|\bare\b|\bequals\b|\bset to\b|"""
                        r"\bis set to\b|\bof\b|\bbecomes\b)\s*", re.I)
_VALUE = re.compile(r"""\s*(?P<q>["'`])?(?P<v>(?(q)[^\n"'`]{1,400}|[^\s"'`,;)(\]\[{}<>]{1,200}))""")
# Words after which a hex run is an object's name, not a secret ("token ... commit 9fceb02").
_NAMING = frozenset("commit sha sha1 sha256 hash digest checksum revision rev id uuid request trace build "
                    "version image file path line column count length limit size".split())
_HEX = re.compile(r"^[0-9a-fA-F]+$")
_WORD = re.compile(r"[^\s]+")
_PUBLIC_PEM = re.compile(r"CERTIFICATE|PUBLIC KEY|PARAMETERS|X509 CRL|CERTIFICATE REQUEST")


# A gate in front of the pattern: substrings some branch needs, each followed (where a bare
# substring would be common) by a pattern the branch implies, searched for in the text
# folded to lowercase. Text the gate rejects holds no match. Most text holds none, and the
# gate reads it tens of times faster than the pattern does (the case-insensitive secret
# word, tried at every token start, makes the pattern slow).
_NEEDLES = [(needle, re.compile(precise) if precise else None, tuple(branches.split()))
            for needle, precise, branches in [
    ("-----begin ", None, "pem"),
    ("sk-", r"sk-[a-z0-9_\-]{20}", "anthropic_key openai_key"),
    ("k_live_", None, "stripe_key"), ("k_test_", None, "stripe_key"),
    ("ghp_", None, "github_token"), ("gho_", None, "github_token"), ("ghu_", None, "github_token"),
    ("ghs_", None, "github_token"), ("ghr_", None, "github_token"), ("github_pat_", None, "github_token"),
    ("glpat-", None, "gitlab_token"), ("xox", r"xox[abposr]-", "slack_token"),
    ("hooks.slack.com/services/", None, "slack_webhook"),
    ("://", r"://[^\s:/@]{1,100}:[^\s@/]{1,200}@", "url_credentials"),
    ("akia", None, "aws_access_key"), ("asia", None, "aws_access_key"), ("aroa", None, "aws_access_key"),
    ("aida", None, "aws_access_key"), ("aiza", None, "google_api_key"), ("ya29.", None, "google_oauth"),
    ("gocspx-", None, "google_client_secret"), ("npm_", None, "npm_token"), ("hf_", None, "huggingface_token"),
    ("sg.", r"sg\.[a-z0-9_\-]{16,}\.", "sendgrid_key"), ("_v1_", None, "digitalocean_token"),
    ("shpat_", None, "shopify_token"), ("shpss_", None, "shopify_token"), ("shpca_", None, "shopify_token"),
    ("shppa_", None, "shopify_token"), ("q~", None, "azure_client_secret"),
    ("eyj", r"eyj[a-z0-9_\-]{8,}\.eyj", "jwt"), ("sig=", None, "azure_sas"),
    ("bearer", r"(?:bearer|basic)\s+[a-z0-9_\-.=+/]{12}", "bearer"),
    ("basic", r"(?:bearer|basic)\s+[a-z0-9_\-.=+/]{12}", "bearer"),
    ("b3blbnnzac1rzxktdje", None, "openssh_key"),
    ("pass", r"pass(?:word|wd|phrase)", "word"), ("pwd", None, "word"), ("secret", None, "word"),
    ("token", None, "word"), ("key", r"(?:api|access|private|auth|account)[ _\-]?key|apikey", "word"),
]]
# der, azure_account_key, aws_secret_key: a run of 40 base64 characters, found as a run of
# 40 marks once every base64 byte is a mark and every other byte a space.
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_MARKS = bytes(b"x"[0] if c in _BASE64 else b" "[0] for c in range(256))
_RUN = b"x" * 40
# Four letters outside ASCII that an IGNORECASE pattern matches to ASCII ones. lower()
# folds K to k; İ (the one letter lower() makes two characters), ı and ſ are folded here.
_FOLDS = (("İ", "i"), ("ı", "i"), ("ſ", "s"))


def _possible(text: str) -> set:
    """The branches that may match somewhere in text (the others cannot: their needle is not
    in it); none, and redact(text) is text unchanged."""
    low = _folded(text)
    found = set()
    for needle, precise, branches in _NEEDLES:
        if needle in low and (precise is None or precise.search(low)):
            found.update(branches)
    if _RUN in low.encode("utf-8", "surrogatepass").translate(_MARKS):
        found.update(("der", "azure_account_key", "aws_secret_key"))
    return found


def _folded(text: str) -> str:
    """text in lowercase, as IGNORECASE sees it, character for character (positions hold)."""
    if text.isascii():
        return text.lower()
    for letter, ascii_letter in _FOLDS:
        if letter in text:
            text = text.replace(letter, ascii_letter)
    return text.lower()


# A secret word's match holds one of these within WORD_REACH characters of its start: at most
# 31 of an identifier before the word (`[A-Za-z0-9]{0,30}?[_\-]?`), and "shared access " before
# "key", the longest way in.
_WORD_NEEDLES = ("pass", "pwd", "secret", "token", "key")
_TOKEN_START = re.compile("(?<![A-Za-z0-9])")   # where every branch may start (_pattern_of)
WORD_REACH = 31 + len("shared access ")


def _redact_words(text: str) -> str:
    """_redact(text, the secret-word pattern) where no other branch can match, trying only the
    places where a match could start: the WORD_REACH characters before each needle (the
    pattern tried at every token start of a long text is most of redaction's time)."""
    low = _folded(text)
    starts = sorted({at for needle in _WORD_NEEDLES for at in _find_all(low, needle)})
    pattern = _pattern_of(_WORD_ONLY)
    out, pos, p = [], 0, 0
    for at in starts:
        p = max(p, pos, at - WORD_REACH)
        while p <= at:
            m = pattern.match(text, p)
            if m is None:  # on to the next place the pattern's look-behind lets a match start
                found = _TOKEN_START.search(text, p + 1, at + 1)
                p = found.start() if found else at + 1
                continue
            replacement, end = _replace(m)
            out.append(text[pos:p])
            out.append(replacement)
            pos = p = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _find_all(text: str, needle: str):
    at = text.find(needle)
    while at >= 0:
        yield at
        at = text.find(needle, at + 1)


@lru_cache(maxsize=256)
def _pattern_of(branches: frozenset) -> re.Pattern:
    """The pattern with only these branches, in their order: where the others cannot match, it
    finds what the whole pattern finds, faster. Every branch starts where a token starts (none
    inside a run of letters and digits), so one look-behind rejects most positions before any
    branch is tried. Compiled when first needed: the whole one takes 7 ms, a command's start."""
    return re.compile("(?<![A-Za-z0-9])(?:" + "|".join(
        f"(?P<{name}>{body})" for name, body in _BRANCHES if name in branches) + ")")


def whole_pattern() -> re.Pattern:
    """The pattern with every branch (what redact() finds, tried everywhere)."""
    return _pattern_of(frozenset(name for name, _ in _BRANCHES))


def redact(text: str) -> str:
    """Return text with every secret replaced by [REDACTED:kind]; everything else byte for byte."""
    if not text or not isinstance(text, str):
        return text
    branches = _possible(text)
    if branches == {"word"}:
        return _redact_words(text)
    return _redact(text, _pattern_of(frozenset(branches))) if branches else text


def _redact(text: str, pattern: re.Pattern | None = None) -> str:
    """redact() without the gate: the pattern (by default the whole one) over the whole text."""
    pattern = pattern or whole_pattern()
    out, pos = [], 0
    while True:
        m = pattern.search(text, pos)
        if m is None:
            break
        replacement, end = _replace(m)
        out.append(text[pos:m.start()])
        out.append(replacement)
        pos = end
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def redact_obj(value, text=None):
    """Redact every string inside a JSON-like value (dicts, lists, strings); text: the redactor
    (default redacted)."""
    text = text or redacted
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {k: redact_obj(v, text) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_obj(v, text) for v in value]
    return value


def _replace(m: re.Match):
    """(what replaces the match, where scanning goes on): a secret word may reach past its match."""
    kind, whole = m.lastgroup, m.group(0)
    if kind == "word":
        return _words(m)
    if kind == "pem":
        keep = _PUBLIC_PEM.search(m.group("pem_label"))
        return (whole if keep else "[REDACTED:private-key]"), m.end()
    if kind == "openssh_key":
        return "[REDACTED:private-key]", m.end()
    if kind == "der":
        return ("[REDACTED:private-key]" if _is_private_der(whole) else whole), m.end()
    if kind == "aws_secret_key":
        return ("[REDACTED:aws-secret-key]" if _looks_random(whole, 40) else whole), m.end()
    if kind == "azure_account_key":
        return ("[REDACTED:azure-account-key]" if _looks_random(whole[:-2], 86) else whole), m.end()
    label = kind.replace("_", "-")
    group = _VALUE_GROUP.get(kind)
    if group:
        start, end = m.span(group)
        return whole[: start - m.start()] + f"[REDACTED:{label}]" + whole[end - m.start():], m.end()
    return f"[REDACTED:{label}]", m.end()


def _words(m: re.Match):
    """A secret word: find the value it names in the words after it, redact that, keep the prose."""
    text, at = m.string, m.end()
    line_end = text.find("\n", at, at + _LOOK_AHEAD)
    rest = text[at: line_end if line_end >= 0 else at + _LOOK_AHEAD]
    connector = _CONNECTOR.match(rest)
    if not connector and text[max(0, m.start() - 2):m.start()].endswith("-"):
        connector = re.match(r"\s+", rest)  # a command-line flag: --password X, -token X
    # "password is X", "API_KEY=X", "token: X", "password for the VPN is X"
    if connector:
        value = _VALUE.match(text, at + connector.end())
        if value is None or text.startswith("-----BEGIN", value.start("v")):
            return text[m.start():at + connector.end()], at + connector.end()  # PEM: its own rule
        v = value.group("v")
        called = text.startswith("(", value.end("v"))
        if not called and _is_secret_value(v, quoted=bool(value.group("q"))):
            return text[m.start():value.start("v")] + _label_of(v), value.end("v")
        return m.group(0), m.end()
    # "the deploy token for staging qX8mPz...": a random-looking value within three words.
    words = list(islice(_WORD.finditer(rest), 3))
    for i, w in enumerate(words):
        value = w.group(0).strip("\"'`.,;:()[]{}<>")
        if value.lower() in _NAMING or _CONNECTOR.match(w.group(0)):
            break
        if value and _looks_random(value, 12) and not (
                _HEX.match(value) and i and words[i - 1].group(0).lower() in _NAMING):
            start = at + w.start() + w.group(0).index(value)
            return text[m.start():start] + "[REDACTED:secret]", start + len(value)
    return m.group(0), m.end()


def _label_of(value: str) -> str:
    """[REDACTED:kind] naming the provider when the whole value has a known shape, else :secret."""
    inner = redact(value)
    if inner.startswith("[REDACTED:") and inner.endswith("]") and inner.count("[") == 1:
        return inner
    return "[REDACTED:secret]"


_LOOK_AHEAD = 160  # how far after a secret word its value is looked for (one line at most)


def _is_secret_value(value: str, quoted: bool) -> bool:
    value = value.strip().rstrip(".,;:!?")
    if len(value) < 3 or _PLACEHOLDER.match(value) or value.startswith("[REDACTED:"):
        return False
    if value.startswith(("/", "./", "../", "~/")) or "://" in value:
        return False  # a path or a URL (credentials inside a URL have their own rule)
    if not quoted and (value.lower() in _PROSE or _PROSE_SUFFIX.match(value)) and value.islower():
        return False
    if quoted and value.count(" ") >= 1 and all(w.lower() in _PROSE for w in value.split()):
        return False
    return True


def _looks_random(value: str, min_len: int) -> bool:
    """Mixed letters and digits with the spread of characters random keys have, not words or hashes."""
    if len(value) < min_len:
        return False
    letters = sum(c.isalpha() for c in value)
    digits = sum(c.isdigit() for c in value)
    upper = sum(c.isupper() for c in value)
    lower = sum(c.islower() for c in value)
    if digits == 0 or letters == 0:
        return False
    if min_len >= 40 and (upper == 0 or lower == 0):
        return False  # hex digests and lowercase identifiers: a key on its own has both cases
    if value.startswith(("/", "./", "~/")) or value.count("/") >= 3:
        return False  # a path
    if re.fullmatch(r"[a-z]+(?:[-_.][a-z0-9]+)+", value) or re.fullmatch(r"v?\d+(?:\.\d+)+[\w.\-]*", value):
        return False  # an identifier-like name (token-bucket-v2) or a version
    return _entropy(value) >= (4.2 if len(value) >= 40 else 3.0)


def _entropy(value: str) -> float:
    n = len(value)
    counts = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _is_private_der(body: str) -> bool:
    """Whether base64 text is the DER of a private key (kept: certificates and public keys).

    Private keys (PKCS#1, PKCS#8, EC, PKCS#12) begin with a version INTEGER, encrypted ones
    with a password-based scheme's OID (1.2.840.113549.1.5 or .1.12); certificates and
    public keys begin with a nested SEQUENCE of something else, and are public by design.
    """
    head = re.sub(r"\\n|\s", "", body)[:40]
    try:
        raw = base64.b64decode(head[: len(head) // 4 * 4])
    except ValueError:
        return False
    if len(raw) < 4 or raw[0] != 0x30:
        return False
    at = 2 + (raw[1] & 0x7F if raw[1] & 0x80 else 0)
    if at < len(raw) and raw[at] == 0x02:
        return True
    inner = raw[at:at + 16]
    return _PBE_OID_5 in inner or _PBE_OID_12 in inner


_PBE_OID_5 = bytes.fromhex("06092a864886f70d0105")    # PKCS#5 PBES1/PBES2
_PBE_OID_12 = bytes.fromhex("060a2a864886f70d010c")   # PKCS#12 PBE


def clean_episode(ep: dict, text=None) -> dict:
    """Redact every text field and serialise facts; nothing unredacted reaches the file.
    text: the redactor (default redacted), redactor_for(the episode's texts) when the caller has it."""
    facts = ep.get("facts") or {}
    text = text or redacted
    return {
        "key": ep["key"],
        "kind": ep["kind"],
        "title": text(ep["title"]),
        "gist": text(ep["gist"]),
        "detail": text(ep.get("detail") or ""),
        "facts": _facts_json(facts, text) if not isinstance(facts, str) else text(facts),
        "at": ep["at"],
        "cwd": ep.get("cwd") or None,
    }


def _facts_json(facts, text) -> str:
    """The facts redacted by text, as JSON. Where only a secret word could be redacted
    (_words_only) and none of its words is in the JSON, none is in any string of the facts
    (JSON keeps letters as they are), so no string would change: the JSON is the answer."""
    if text is _unchanged:
        return _FACTS_JSON.encode(facts)
    if text is _words_only:
        encoded = _FACTS_JSON.encode(facts)
        low = _folded(encoded)
        if not any(needle in low for needle in _WORD_NEEDLES):
            return encoded
    return _FACTS_JSON.encode(redact_obj(facts, text))


# json.dumps(facts, ensure_ascii=False, sort_keys=True), without a new encoder each time
_FACTS_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


def _unchanged(text: str) -> str:
    return text


def redactor_for(texts: list):
    """A function that redacts each of these texts (or a string inside one) as redact() does,
    chosen by one gate pass over them all (the episodes of one transcript: a long text of theirs
    then needs no gate pass of its own).

    The branches that may match in one text are among those that may match in all of them
    joined (a needle in one is in the whole), so: none, and nothing is redacted; only the secret
    word, and long texts go straight to its search; any other, and each text is redact()ed."""
    branches = _possible("\n".join(set(texts)))
    if not branches:
        return _unchanged
    return _words_only if branches == _WORD_ONLY else redacted


_WORD_ONLY = frozenset(("word",))


def _words_only(text: str) -> str:
    """redact(text) for a text in which no branch but the secret word's can match."""
    if isinstance(text, str) and len(text) > REDACTED_KEPT_CHARS:
        return _redact_words(text)
    return redacted(text)  # short texts repeat: redacted remembers them


def strings_in(value, out: list) -> None:
    """Append every string inside a JSON-like value (what redact_obj would redact) to out."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            strings_in(v, out)
    elif isinstance(value, list):
        for v in value:
            strings_in(v, out)


REDACTED_KEPT = 8192        # distinct short texts whose redaction is remembered (a few MB)
REDACTED_KEPT_CHARS = 300   # longer texts are rarely repeated: redacted each time


def redacted(text: str) -> str:
    """redact(text), once per distinct short text: commands, tools, error lines and titles
    repeat across the episodes of a session and across sessions."""
    if not isinstance(text, str) or len(text) > REDACTED_KEPT_CHARS:
        return redact(text)
    return _redacted_short(text)


@lru_cache(maxsize=REDACTED_KEPT)
def _redacted_short(text: str) -> str:
    return redact(text)
