"""256-dimension hashed word and bigram vectors, their compact encoding, and cosine.

No model, no vocabulary: each stemmed word (and each pair of neighbouring words) is
hashed with CRC-32, which is stable across processes and machines (Python's own
`hash()` is salted per process), into one of 256 dimensions with a hashed sign.
"""
import math
import re
import zlib
from array import array
from operator import itemgetter, mul
try:    # Counter's own counting loop, in C in CPython; a Counter's class calls cost a vector 10%
    from collections import _count_elements
except ImportError:     # a Python without it: the same counts in the same order
    def _count_elements(mapping, iterable):
        for x in iterable:
            mapping[x] = mapping.get(x, 0) + 1

DIMENSIONS = 256
BIGRAM_WEIGHT = 0.5  # a shared pair of words says more than a shared word, but rarer

STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just let lets me more most my myself of off on once only or other our ours ourselves out over
own same she should so some such than that thats the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves ok okay please also
get got im ive youre dont doesnt didnt isnt wasnt cant wont shouldnt don doesn didn isn wasn
shouldn wouldn couldn aren weren haven hasn
""".split())

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_VOWEL = re.compile(r"[aeiouy]")


def stem(word: str) -> str:
    """A light, deterministic suffix stripper (plurals, -ed, -ing): 'tests', 'testing' -> 'test'."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            if len(base) >= 3 and _VOWEL.search(base):
                if len(base) > 3 and base[-1] == base[-2] and base[-1] not in "lsz":
                    base = base[:-1]  # running -> run
                return base
    return word


# Derivational endings of one word family, as recall's coverage, proximity and excerpt compare
# words (family): 'summarization', 'summarize', 'summaries' (stem 'summary') -> 'summar';
# 'validity', 'validation' -> 'valid'; 'management' -> 'manage'. The index's Porter stemmer joins
# most families itself (optimization and optimize, validity and validation) but not a -y with its
# -ize ('summari', 'summar'); the light stemmer above joins none. Taken off longest first while
# 5 letters or more stay (4 before a final y after a consonant: 'summary', 'query'; 'copy', 'key'
# and 'city' stay as they are); -iz is what the light stem leaves of -izing and -ized. The stored
# vectors keep the light stems (recall21, OPERATIONS.md).
_FAMILY_ENDINGS = ("ization", "isation", "ation", "ize", "iz", "ity", "ment", "y")


def family(stem: str) -> str:
    """A stem's word family: its derivational endings taken off in turn ('summarization' -> 'summar')."""
    found = _FAMILIES.get(stem)
    if found is None:
        found = stem
        for _ in range(3):
            ending = next((e for e in _FAMILY_ENDINGS if found.endswith(e) and len(found) - len(e) >= (
                4 if e == "y" else 5) and not (e == "y" and found[-2] in "aeiou")), None)
            if ending is None:
                break
            found = found[:-len(ending)]
        if len(_FAMILIES) >= CACHED:
            _FAMILIES.clear()
        _FAMILIES[stem] = found
    return found


def terms(text: str) -> list[str]:
    """What the vectors and recall's coverage read of text: its words (words), and each run of Chinese
    or Japanese characters (SPACELESS_CHARS) as its overlapping pairs of characters (grams), in its
    place among them. A text without such a run reads as words() reads it, byte for byte (other scripts
    are not read: ARCHITECTURE.md, "Scripts without spaces")."""
    if not text or text.isascii() or not SPACELESS_RUN.search(text):
        return words(text)
    out = []
    known = _STEMS
    for m in _SCRIPT_WORD.finditer(text):
        raw = m.group(0)
        found = known.get(raw)
        if found is None:
            found = _token_words(raw) if raw.isascii() else tuple(_grams(raw))
            if len(known) >= CACHED:
                known.clear()
            known[raw] = found
        out += found
    return out


# Scripts written without spaces between words (Chinese, Japanese): Han ideographs (and their iteration
# marks), hiragana, katakana (and its half-width forms). The text index reads a run of them between
# punctuation as one token ("被同队列多个"), and words() read nothing of it, so a question's word ("队列")
# matched nowhere inside it. Both now read such a run as its overlapping pairs of characters (被同 同队
# 队列 列多 多个; a run of one character as itself): no dictionary, and a word of two characters, the
# commonest length in either language, is always one of the pairs (ARCHITECTURE.md, "Scripts without spaces").
SPACELESS_CHARS = ("\u3005-\u3007\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
                   "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f")
SPACELESS_RUN = re.compile("[%s]+" % SPACELESS_CHARS)
# In text order: ASCII words (as tokens() finds them) and runs of spaceless script.
_SCRIPT_WORD = re.compile("[A-Za-z0-9]+|[%s]+" % SPACELESS_CHARS)


def _grams(run: str):
    """A spaceless run's overlapping pairs of characters; a run of one character, itself."""
    if len(run) == 1:
        yield run
        return
    for i in range(len(run) - 1):
        yield run[i:i + 2]


def grams(text: str) -> str:
    """What the text index reads of text beside its words, where text holds spaceless script
    (SPACELESS): each of its tokens (as FTS5's unicode61 finds them: letters and digits) that holds
    such a run, as the words between its runs and each run's pairs of characters, separated by
    spaces, after a space, as the index appends them to the field ("docker容器里" -> " docker 容器 器里").
    '' for a text with none: the index reads it as before (migrations.GRAMS)."""
    if not text or text.isascii() or not SPACELESS_RUN.search(text):
        return ""
    out = [""]
    for token in _TOKEN.findall(text):
        if SPACELESS_RUN.search(token):
            out += pieces(token)
    return " ".join(out)


_TOKEN = re.compile(r"[^\W_]+")


def pieces(token: str) -> list:
    """A token (letters and digits) as the index's words: its spaceless runs as their pairs of
    characters (grams), the letters between them as they are; a token without such a run, itself."""
    if token.isascii() or not SPACELESS_RUN.search(token):
        return [token]
    out = []
    for part in _SPACED.split(token):
        if not part:
            continue
        if SPACELESS_RUN.match(part):
            out += _grams(part)
        else:
            out.append(part)
    return out


_SPACED = re.compile("([%s]+)" % SPACELESS_CHARS)


def words(text: str) -> list[str]:
    """Lowercased, stemmed content words of text (runs of ASCII letters and digits); camelCase and
    snake_case are split. What wording, failures and a lesson's veto key read (terms: what recall reads)."""
    out = []
    known = _STEMS
    for raw in tokens(text):
        found = known.get(raw)
        if found is None:
            found = _token_words(raw.decode("ascii"))
            if len(known) >= CACHED:
                known.clear()
            known[raw] = found
        out += found
    return out


# Words are runs of ASCII letters and digits, found without a regex: in the text's UTF-8
# bytes every other byte (a byte of a character outside ASCII too) becomes a space.
_ALNUM_ONLY = bytes(c if chr(c).isascii() and chr(c).isalnum() else 32 for c in range(256))


def tokens(text: str) -> list[bytes]:
    """The runs of [A-Za-z0-9] in text, as ASCII bytes (re.findall's, four times faster)."""
    return (text or "").encode("utf-8", "surrogatepass").translate(_ALNUM_ONLY).split()


# Words repeat across a person's history: a token's stems and a feature's slot are worked out
# once per process and kept in plain dicts (a lookup is the cost of a vector's every word),
# each emptied when it reaches CACHED entries (a few MB).
CACHED = 65536
_STEMS: dict = {}           # raw token (bytes) -> its stems
_WORD_SLOTS: dict = {}      # stem -> (dimension, sign)
_PAIR_SLOTS: dict = {}      # (stem, stem) -> (dimension, sign)
_FAMILIES: dict = {}        # stem -> its word family (family)


def _token_words(raw: str) -> tuple:
    out = []
    for part in _CAMEL.split(raw):
        w = part.lower()
        if len(w) < 2 and not w.isdigit():
            continue
        if w in STOP_WORDS:
            continue
        out.append(stem(w))
    return tuple(out)


def _slot(feature: str) -> tuple[int, float]:
    h = zlib.crc32(feature.encode("utf-8"))
    return h % DIMENSIONS, (1.0 if (h >> 16) & 1 else -1.0)


def _cached_slot(cache: dict, key, feature: str) -> tuple[int, float]:
    if len(cache) >= CACHED:
        cache.clear()
    found = cache[key] = _slot(feature)
    return found


def _sparse(text: str) -> dict:
    """{dimension: value} of text's hashed vector before normalising (zeros left out)."""
    tokens = terms(text)
    vec: dict[int, float] = {}
    get = vec.get
    slots = _WORD_SLOTS
    counts: dict = {}   # Counter(tokens)'s counts, in its order, without a Counter's own calls
    _count_elements(counts, tokens)
    for w, n in counts.items():
        i, sign = slots.get(w) or _cached_slot(slots, w, "w:" + w)
        # sublinear term frequency: sign × 1, or sign × (1 + ln n) for a word said n times
        vec[i] = get(i, 0.0) + (sign if n == 1 else sign * (1.0 + math.log(n)))
    slots = _PAIR_SLOTS
    counts = {}
    _count_elements(counts, zip(tokens, tokens[1:]))
    for pair, n in counts.items():
        i, sign = slots.get(pair) or _cached_slot(slots, pair, "b:" + pair[0] + " " + pair[1])
        vec[i] = get(i, 0.0) + (sign * BIGRAM_WEIGHT if n == 1 else sign * ((1.0 + math.log(n)) * BIGRAM_WEIGHT))
    return vec


def _normalised(text: str) -> dict:
    """{dimension: value} at length 1, in dimension order; {} when text has no content words."""
    vec = _sparse(text)
    items = sorted(vec.items())
    norm = math.sqrt(sum([x * x for _, x in items]))  # summed in dimension order, as a dense sum would
    return {i: x / norm for i, x in items} if norm else {}


def vector(text: str) -> list[float]:
    """The L2-normalised hashed vector of text (all zeros when it has no content words)."""
    vec = [0.0] * DIMENSIONS
    for i, x in _normalised(text).items():
        vec[i] = x
    return vec


def encoded(text: str) -> bytes:
    """encode(vector(text)), the same bytes, computed only over the dimensions text touches
    (_encode_sparse(_normalised(text)) in one pass: the peak of the normalised values is the
    peak of the raw ones over the norm, to the bit, as dividing by one positive number keeps
    their order)."""
    vec = _sparse(text)
    dims = sorted(vec)
    xs = list(map(vec.__getitem__, dims))
    norm = math.sqrt(sum([x * x for x in xs]))  # summed in dimension order, as _normalised does
    if not norm:
        return _ZERO
    peak = max(map(abs, xs)) / norm
    values = [round(x / norm * 127.0 / peak) & 0xFF for x in xs]
    if 0 in values:     # a component that rounds to zero is left out (_packed)
        dims, values = [i for i, v in zip(dims, values) if v], [v for v in values if v]
    if len(dims) > SPARSE_MOST:
        return _packed(list(zip(dims, values)))
    out = bytearray(2 * len(dims))      # _packed's pairs, interleaved in two slice assignments
    out[0::2] = dims
    out[1::2] = values
    return bytes(out)


_ZERO = b""     # no component: no pair


def _encode_sparse(vec: dict) -> bytes:
    peak = max(map(abs, vec.values()), default=0.0)
    if not peak:
        return _ZERO
    return _packed([(i, round(vec[i] * 127.0 / peak) & 0xFF) for i in sorted(vec)])


# A vector is stored as its components that are not zero, each as two bytes (dimension,
# signed value), in dimension order: a passage's or an episode's text touches about 46 of the
# 256 dimensions (dense sessions), 93 bytes instead of 256. One that touches more than
# SPARSE_MOST is stored as all 256 signed bytes, as every vector was before: a blob of 256
# bytes is that form (a sparse one has an even length below it), and both are read alike.
SPARSE_MOST = 127


def _packed(components: list) -> bytes:
    """The stored form of [(dimension, value as an unsigned byte)] in dimension order: the
    pairs whose value is not zero, or all 256 bytes when they are more than SPARSE_MOST."""
    pairs = [c for c in components if c[1]]
    if len(pairs) <= SPARSE_MOST:
        return bytes([b for pair in pairs for b in pair])
    out = bytearray(DIMENSIONS)
    for i, v in pairs:
        out[i] = v
    return bytes(out)


def encode(vec) -> bytes:
    """Pack a vector, scaled so its largest component is ±127, as signed bytes: the pairs of
    its dimensions that are not zero (_packed).

    Cosine is scale-invariant, so the scale need not be stored: about 90 bytes a row
    instead of ~5 KB of JSON, and decoding is one `array` call.
    """
    return _encode_sparse({i: x for i, x in enumerate(vec) if x})


def decode(blob: bytes) -> array:
    """The integer components of an encoded vector (either stored form), all 256."""
    if len(blob) == DIMENSIONS:
        return array("b", blob)
    out = array("b", bytes(DIMENSIONS))
    for i, v in zip(blob[::2], array("b", blob[1::2])):
        out[i] = v
    return out


def unit_of(text: str) -> dict:
    """unit(vector(text)), the same floats, without the 256-slot list between (sleep's every surprise)."""
    vec = _normalised(text)
    norm = math.hypot(*vec.values())
    return {i: x / norm for i, x in vec.items() if x} if norm else {}


def word_unit(text: str) -> dict:
    """text's words and pairs of neighbouring words, weighted as vector() weighs them, at length 1,
    keyed by the word itself instead of a hashed slot: {} when text has no content words. Two short
    texts' hashed vectors can share a slot with no word in common ("lsp" and "mode" share one, with
    one sign); their cosine over these is what they have in common, not what collides."""
    tokens = terms(text)
    vec: dict = {}
    for w in tokens:
        vec["w:" + w] = vec.get("w:" + w, 0) + 1
    for a, b in zip(tokens, tokens[1:]):
        vec["b:" + a + " " + b] = vec.get("b:" + a + " " + b, 0) + 1
    vec = {k: (1.0 + math.log(n)) * (BIGRAM_WEIGHT if k[0] == "b" else 1.0) for k, n in vec.items()}
    norm = math.hypot(*vec.values())
    return {k: x / norm for k, x in vec.items()} if norm else {}


def unit(vec) -> dict:
    """A vector (list, array or encoded blob) as {dimension: value} at length 1: hashed vectors of
    short texts are sparse, so sleep compares them as dicts. {} when the vector is empty."""
    if isinstance(vec, (bytes, bytearray, memoryview)):
        vec = decode(vec)
    norm = math.hypot(*vec)
    return {i: x / norm for i, x in enumerate(vec) if x} if norm else {}


def dot(a: dict, b: dict) -> float:
    """Dot product of two sparse vectors: their cosine when both come from unit()."""
    if len(a) > len(b):
        a, b = b, a
    return sum(x * b.get(i, 0.0) for i, x in a.items())


class Against:
    """A sparse vector laid out to be dotted with many others (sleep: a surprise with every lesson):
    its components in its own order, and in every dimension (0.0 where it has none); which dimensions
    it has (dims, one bit each) and its largest component's size (peak), for a bound (most)."""

    def __init__(self, a: dict):
        self.size = len(a)
        self.values = tuple(a.values())
        self.dense = [0.0] * DIMENSIONS
        self.dims = 0
        for i, x in a.items():
            self.dense[i] = x
            self.dims |= 1 << i
        self.peak = max(map(abs, self.values), default=0.0)
        self._pick = itemgetter(*a) if len(a) > 1 else (lambda b, dims=tuple(a): tuple(b[i] for i in dims))

    def most(self, dims: int, peak: float) -> float:
        """The most a dot product with a vector of these dimensions and largest component can be:
        each dimension the two share adds at most the product of their largest components."""
        return (self.dims & dims).bit_count() * self.peak * peak

    def dot(self, b: dict, b_dense: list) -> float:
        """dot(a, b) to the bit, b given also in every dimension: the same products, in the order of
        the vector with fewer components, added by the same sum(); without a Python step a product."""
        if len(b) > self.size:
            return sum(map(mul, self.values, self._pick(b_dense)))
        return sum(map(mul, b.values(), map(self.dense.__getitem__, b)))


def cosine(a, b) -> float:
    """Cosine similarity of two vectors (lists, arrays or encoded blobs); 0 when either is empty."""
    return dot(unit(a), unit(b))


# A stored vector's bytes are unsigned (encode); reading them through tables keeps the cosine
# of one recall candidate near 8 µs in pure Python, in either stored form.
_SIGNED = [b - 256 if b > 127 else b for b in range(256)]
_SQUARED = [v * v for v in _SIGNED]


def stored_cosine(query: dict, blob: bytes) -> float:
    """Cosine of a sparse unit vector and a stored (encoded) one: recall's per-candidate fast path.
    The same float from either stored form: the same products, zeros included, in query order."""
    if len(blob) == DIMENSIONS:
        norm = math.sqrt(sum(map(_SQUARED.__getitem__, blob)))
        if not norm:
            return 0.0
        return sum(x * _SIGNED[blob[i]] for i, x in query.items()) / norm
    values = blob[1::2]
    norm = math.sqrt(sum(map(_SQUARED.__getitem__, values)))
    if not norm:
        return 0.0
    stored = dict(zip(blob[::2], map(_SIGNED.__getitem__, values)))
    get = stored.get
    return sum(x * get(i, 0) for i, x in query.items()) / norm
