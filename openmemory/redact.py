"""Secret redaction: everything openmemory stores or writes passes through `redact` first.

Four families, branches of ONE pattern scanned once over the text:
- shapes: provider token prefixes (about sixty), one wrapped over lines by a terminal or a tool
  or cut short where a line or the text ends (cut_token), private-key PEM blocks whole or in halves
  (a BEGIN whose END is in another text; a run of base64 lines ending in an END), bare DER
  and OpenSSH bodies, JWTs, credentials and keys in URLs (database URLs, Sentry DSNs,
  webhook URLs), signatures of signed URLs, an Authorization header's credentials (`Bearer`,
  `Basic`, GitHub's `token <hex>`, an API's bare key), a Cookie or Set-Cookie header's session
  values, cloud secret keys on their own, Google's OAuth refresh tokens (`1//0…`), base64 that
  decodes to credentials (`user:pass`, JSON holding a secret, a PEM private key), a random key
  alone on its line with no word naming it (`_lone_key`: not a name written together, not a line
  of a base64 block);
- words: a secret word (password, passphrase, secret, token, api key, ..., and "password",
  "secret", "key" in seventeen other languages) read with the few words after it, so "the
  staging password is hunter2" and "la contraseña es hunter2X" lose their value while "the
  password is wrong" keeps its words; a passphrase's value is its words ("passphrase: correct
  horse battery staple") when none is one prose needs ("passphrase: see the wiki"); a base64
  key is no path for its slashes ("secret: /cJIG…+…/gJt…");
- names: an assignment to a name whose last part says pass, pw, key, auth, dsn, webhook or
  credentials, in any case and separator style (`DB_PASS=`, `encryptionKey:`, `"db-pw": `,
  `--db-pass x`), and to `pw` or `pass` alone (`pw: hunter2xyz`, "the login pass Alley447$…"),
  its value judged by what the name says;
- commands: passwords given as arguments (`mysql -p…`, `curl -u user:pass`, `sshpass -p`,
  `redis-cli -a`, `docker login -p`, `openssl -passin pass:…`, `IDENTIFIED BY '…'`).
A false positive costs a few characters of a memory; a false negative copies a secret
into a database that outlives the transcript, so the rules lean towards redacting. Each
rule that keeps a look-alike (commit hashes, UUIDs, paths, base64 images, lockfile
digests, certificates) says how it is told apart; tests/test_redact.py holds the table.

A text is redacted whole before any cut; a huge one only in the stretches a cut keeps, plus
MARGIN on each side (`redacted_head`, `redacted_tail`; `secret_safe_clip`, `secret_safe_clip_block`
redact only where they cut, and the store's gate redacts what they leave whole).
"""
import base64
import binascii
import json
import math
import re
from functools import lru_cache
from itertools import islice

from . import shorten


# Patterns are compiled when the first text is redacted, not at import: a command that never
# redacts (recall, show, status, a session start's hook) does not pay their 10-15 ms at its start.
class _Later:
    """A pattern compiled by ready(), which puts the compiled one in this one's place among the
    module's globals; used before that (by a reader outside), it compiles everything first."""

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern, self.flags, self.compiled = pattern, flags, None

    def __getattr__(self, name):
        ready()
        return getattr(self.compiled, name)


def _later(pattern: str, flags: int = 0) -> re.Pattern:
    return _Later(pattern, flags)   # typed as the pattern it stands for: the same use, once ready() ran


_READY = False


def ready() -> None:
    """Compile every pattern and build the gate's tables, once: called by what every redaction
    passes through first (the gate: _possible, _possible_each, _gate; the patterns: _pattern_of)."""
    global _READY, _NEEDLES, _INSIDE, _ANCHORS_INSIDE, _NEEDLE_RES
    if _READY:
        return
    g = globals()
    for name, value in list(g.items()):
        if isinstance(value, _Later):
            value.compiled = g[name] = re.compile(value.pattern, value.flags)
    _NEEDLE_RES = tuple(map(re.compile, _NEEDLE_SOURCES))
    _NEEDLES = [(needle, re.compile(precise) if precise else None, branches) for needle, precise, branches in _NEEDLE_SPECS]
    # A needle found may hide others inside it ("passwort" holds "pass"): each found needle stands
    # for every needle it contains.
    _INSIDE = {n: [(p, b) for m, p, b in _NEEDLES if m in n] for n, _, _ in _NEEDLES}
    # The needles of anchored branches a found needle holds (itself included).
    _ANCHORS_INSIDE = {n: frozenset(m for m, p, b in _NEEDLES if m in n and set(b) & _ANCHORED) for n, _, _ in _NEEDLES}
    _READY = True


def __getattr__(name: str):
    """The gate's tables (_NEEDLES, _INSIDE, _ANCHORS_INSIDE) for a reader outside, built at first use."""
    if name in ("_NEEDLES", "_INSIDE", "_ANCHORS_INSIDE"):
        ready()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# Words that name a secret. Plural and `_id`/`-file` style suffixes are read as the same word.
_SECRET_WORD = (r"(?:pass(?:word|wd|phrase)|pwd|secret(?:[ _\-]?(?:access[ _\-]?)?key)?|token|"
                r"api[ _\-]?key|apikey|access[ _\-]?key|private[ _\-]?key|auth[ _\-]?key|"
                r"client[ _\-]?secret|account[ _\-]?key|shared[ _\-]?access[ _\-]?key|"
                r"(?:licen[cs]e|encryption|signing|master|recovery|product|activation|hmac|aes|cipher)[ _\-]?key)")
# "Password", "secret" and "key" in other languages: es, de, fr, pt, it, nl, pl, tr, sv, cs, fi,
# hu, id (Latin script, whole words), ru/uk (Cyrillic), ar, hi, ja, zh, ko (no word boundaries
# in CJK text: "パスワードはhunter2です").
_FOREIGN_LATIN = (r"contrase(?:ñ|n)as?|passw(?:ort|örter|oerter)|kennw(?:ort|örter|oerter)|geheimnis|"
                  r"schl(?:ü|ue)ssel|mots? de passe|mdp|cl(?:é|e)f|clés?(?: secrètes?)?|senhas?|"
                  r"palavras?[- ]passe|segredo|chaves?|chiav[ei]|parola d'ordine|segret[oi]|secretos?|claves?|"
                  r"wachtwoord(?:en)?|has(?:ł|l)o|(?:ş|s)ifre|l(?:ö|o)senord|heslo|salasana|jelsz(?:ó|o)|kata sandi|"
                  r"парол(?:ь|я|ем|і)|секрет|ключ|токен")
_FOREIGN_OTHER = (r"كلمة المرور|كلمة السر|पासवर्ड|パスワード|暗証番号|秘密鍵|シークレット|トークン|密码|密碼|口令|密钥|密鑰|秘钥|"
                  r"令牌|비밀번호|암호|토큰")
# The foreign words for a password: a number of four digits or more after them is one (a PIN).
_FOREIGN_PASSWORD = _later(r"contrase|passw|kennw|passe|mdp|senha|parola|wachtw|has[łl]o|[şs]ifre|l[öo]senord|heslo|"
                           r"salasana|jelsz|sandi|парол|المرور|السر|पासवर्ड|パスワード|暗証|密码|密碼|口令|비밀번호|암호", re.I)
# The last part of a name that makes an assignment to it a secret ("weak": the value decides).
_WEAK = r"(?:pass|pw|key|auth|dsn|webhook|credentials?|creds?)"

_BR = r"(?:\\r)?(?:\\n|\r?\n)"                 # a line break, also as JSON writes it inside a string
_NUM = r"(?:[ \t]*\d{1,7}(?:→|\t))?"            # the line number Claude Code's Read puts before a line
_B64LINE = r"[A-Za-z0-9+/=]{1,80}"

# Provider-prefixed tokens a line break may cut (_cut_token): (prefix, token characters, what the
# provider's branch wants after the prefix at least, its exact length if fixed or None, kind).
_CUT_FAMILIES = [
    (r"sk-ant-", r"[A-Za-z0-9_\-]", 16, None, "anthropic-key"),
    (r"sk-(?:proj-|svcacct-|admin-|or-v1-)?", r"[A-Za-z0-9_\-]", 20, None, "openai-key"),
    (r"[rsp]k_(?:live|test)_", r"[A-Za-z0-9]", 16, None, "stripe-key"),
    (r"gh[pousr]_", r"[A-Za-z0-9]", 30, 36, "github-token"),
    (r"github_pat_", r"[A-Za-z0-9_]", 22, 82, "github-token"),
    (r"gl(?:pat|ptt|dt|rt|cbt|imt|oas|ft|soat|agent)-", r"[A-Za-z0-9_\-]", 20, None, "gitlab-token"),
    (r"(?:xox[abposre]|xapp)-", r"[A-Za-z0-9\-]", 10, None, "slack-token"),
    (r"(?:AKIA|ASIA|AROA|AIDA)", r"[0-9A-Z]", 16, 16, "aws-access-key"),
    (r"AIza", r"[0-9A-Za-z_\-]", 35, 35, "google-api-key"),
    (r"GOCSPX-", r"[A-Za-z0-9_\-]", 20, None, "google-client-secret"),
    (r"npm_", r"[A-Za-z0-9]", 36, 36, "npm-token"),
    (r"hf_", r"[A-Za-z0-9]", 30, None, "huggingface-token"),
    (r"gsk_", r"[A-Za-z0-9]", 48, 56, "groq-key"),
    (r"xai-", r"[A-Za-z0-9]", 70, 90, "xai-key"),
    (r"pplx-", r"[A-Za-z0-9]", 40, 56, "perplexity-key"),
    (r"dckr_pat_", r"[A-Za-z0-9_\-]", 27, None, "dockerhub-token"),
]
# Where a cut token's visible part ends: a line break (a wrap; spaces may stand before it), also
# as JSON writes it, the text's end, or an ellipsis a tool cut it with.
_CUT_BREAK = r"[ \t]*(?:\r?\n|(?:\\r)?\\n)"
_CUT_END = _CUT_BREAK + r"|[ \t]*\Z|…"
# What may follow a wrapped token's last piece: a space, the end, a closing quote or bracket, a
# sentence's punctuation; not "=", ":", "(", "/" or a letter (a name, a call, a path).
_CUT_FOLLOW = r"(?=[\s\"'`,;)\]}>\\]|[.!?](?![\w/])|…|\Z)"
# The longest a wrapped token of a family without a fixed length is read (the longest provider
# keys, OpenAI's project keys and Anthropic's, are about 170 characters).
_CUT_LONGEST = 256
# A visible part cut short is a secret from 12 characters that look random: the shortest keys
# these families make have 16 (AWS key ids) to 20 (OpenAI, GitLab) after their prefix, so 12
# is three quarters of the shortest one, 70 bits of base62; identifiers after a prefix
# (sk-learn, ghp_token_name) have no digits or a word's spread (_looks_random).
_CUT_VISIBLE = 12

# Every branch is one alternative of one pattern; its group name is the kind reported in
# [REDACTED:kind]. Order matters only between branches that can start at the same place.
# Branches over long character runs start with a look-behind, so a position inside a run
# fails at once and a long line costs one pass, not one pass per character.
_BRANCHES = [
    # A PEM block of any label, or its first half (no END in this text: up to the text's end);
    # kept only when the label says it is public (certificates, public keys: meant to be shared).
    ("pem", r"-----BEGIN (?P<pem_label>[A-Z0-9 ]{1,40})-----[\s\S]*?(?:-----END [A-Z0-9 ]{1,40}-----|\Z)"),
    # The second half of a PEM block read apart: base64 lines (at most 120 of 80) and its END.
    ("pem_tail", r"(?<![A-Za-z0-9+/=])" + _B64LINE + r"(?:" + _BR + _NUM + _B64LINE + r"){0,120}" + _BR + _NUM
                 + r"-----END [A-Z0-9 ]{0,30}PRIVATE[A-Z0-9 ]{0,30}-----"),
    # A PuTTY private key file's private lines.
    ("putty_key", r"Private-Lines: ?\d{1,4}(?:" + _BR + _NUM + _B64LINE + r"){1,200}"),
    ("age_key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    # A provider-prefixed token that ends where its line or the text does: wrapped by a terminal
    # or a tool (its rest on the next line) or cut off there (_cut_token). Before the providers'
    # branches: a whole token at a line's end is handed back to them.
    # `(?=(?P<r>X*))(?P=r)` takes X* whole and never gives any back (Python 3.11's possessive
    # `X*+`, which 3.10 does not have): no backtracking through a long run of token characters.
    ("cut_token", r"\b(?:" + "|".join(f"(?P<cutp{i}>{prefix})(?=(?P<cutr{i}>{chars}*))(?P=cutr{i})"
                                      for i, (prefix, chars, _, _, _) in enumerate(_CUT_FAMILIES))
                  + r")(?=" + _CUT_END + r")"),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{16,}"),
    ("mapbox_key", r"\bsk\.eyJ[A-Za-z0-9_\-]{20,}\.[A-Za-z0-9_\-]{20,}"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-|or-v1-)?[A-Za-z0-9_\-]{20,}"),
    ("stripe_key", r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("stripe_webhook", r"\bwhsec_[A-Za-z0-9+/=]{20,}"),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("gitlab_token", r"\bgl(?:pat|ptt|dt|rt|cbt|imt|oas|ft|soat|agent)-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", r"\b(?:xox[abposre]|xapp)-[A-Za-z0-9\-.]{10,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+"),
    ("discord_webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_\-]+"),
    ("teams_webhook", r"https://[A-Za-z0-9\-]+\.webhook\.office\.com/webhookb2/[^\s\"'<>]+"),
    ("zapier_webhook", r"https://hooks\.zapier\.com/hooks/catch/\d+/[A-Za-z0-9]+/?"),
    ("aws_access_key", r"\b(?:AKIA|ASIA|AROA|AIDA)[0-9A-Z]{16}\b"),
    ("aws_session_token", r"\b(?:FwoGZXIvYXdzE|IQoJb3JpZ2luX2Vj)[A-Za-z0-9+/=]{60,}"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    ("google_oauth", r"\bya29\.[0-9A-Za-z_\-]{20,}"),
    # Google's OAuth refresh tokens: "1//0" and about a hundred URL-safe characters (gcloud's and
    # an OAuth client's credentials files, `application_default_credentials.json`); 40 at least,
    # so "1//0" in a path or a comment stays.
    ("google_refresh_token", r"(?<![A-Za-z0-9_\-/])1//0[0-9A-Za-z_\-]{40,}"),
    ("google_client_secret", r"\bGOCSPX-[A-Za-z0-9_\-]{20,}"),
    ("firebase_key", r"\bAAAA[A-Za-z0-9_\-]{7}:APA91b[A-Za-z0-9_\-]{100,}"),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("pypi_token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
    ("rubygems_key", r"\brubygems_[a-f0-9]{48}\b"),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("replicate_token", r"\br8_[A-Za-z0-9]{37}\b"),
    ("groq_key", r"\bgsk_[A-Za-z0-9]{48,56}\b"),
    ("xai_key", r"\bxai-[A-Za-z0-9]{70,90}\b"),
    ("perplexity_key", r"\bpplx-[A-Za-z0-9]{40,56}\b"),
    ("langsmith_key", r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b"),
    ("sendgrid_key", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    ("mailgun_key", r"\bkey-[0-9a-zA-Z]{32}\b"),
    ("mailchimp_key", r"\b[0-9a-f]{32}-us\d{1,2}\b"),
    ("twilio_key", r"\bSK[0-9a-fA-F]{32}\b"),
    ("telegram_token", r"\b(?:bot)?\d{8,10}:AA[A-Za-z0-9_\-]{33}\b"),
    ("discord_token", r"(?<![A-Za-z0-9_\-.])[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}"
                      r"(?![A-Za-z0-9_\-.])"),
    ("digitalocean_token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("shopify_token", r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
    ("vault_token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{20,}"),
    # Vault's older service tokens, "s." and 24 characters: told from `s.SomeMethodName` in code
    # by the spread of a random key (_looks_random).
    ("vault_legacy", r"(?<![A-Za-z0-9_.])s\.[A-Za-z0-9]{24}(?![A-Za-z0-9_.])"),
    ("heroku_key", r"\bHRKU-[A-Za-z0-9_\-]{30,}"),
    ("linear_key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{32,}"),
    ("doppler_token", r"\bdp\.(?:st|ct|sa|scim|audit|pt)\.(?:[A-Za-z0-9_\-]{1,40}\.)?[A-Za-z0-9]{40,44}\b"),
    ("postman_key", r"\bPMAK-[A-Fa-f0-9]{24}-[A-Fa-f0-9]{34}\b"),
    ("atlassian_token", r"\b(?:ATATT|ATCTT)[A-Za-z0-9_\-=]{40,}"),
    ("bitbucket_token", r"\bATBB[A-Za-z0-9_\-=.]{28,}"),
    ("square_token", r"\b(?:sq0(?:atp|csp|idp)-[A-Za-z0-9_\-]{22,}|EAAA[A-Za-z0-9_\-+=]{60,})"),
    ("databricks_token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b"),
    ("grafana_token", r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|glc_[A-Za-z0-9+/]{32,}={0,2})"),
    ("newrelic_key", r"\bNR(?:AK|JS|II)-[A-Z0-9]{27}\b"),
    ("sentry_token", r"\bsntry[su]_[A-Za-z0-9+/=_\-]{40,}"),
    ("supabase_token", r"\bsbp_[a-f0-9]{40}\b"),
    ("pulumi_token", r"\bpul-[a-f0-9]{40}\b"),
    ("notion_token", r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{46})\b"),
    ("tailscale_key", r"\btskey-[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]+\b"),
    ("onepassword_token", r"\bops_eyJ[A-Za-z0-9+/=_\-]{40,}"),
    ("buildkite_token", r"\bbkua_[a-f0-9]{40}\b"),
    ("alibaba_key", r"\bLTAI[A-Za-z0-9]{12,20}\b"),
    ("terraform_token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,70}"),
    ("figma_token", r"\bfigd_[A-Za-z0-9_\-]{40}\b"),
    ("netlify_token", r"\bnfp_[A-Za-z0-9]{36}\b"),
    ("fly_token", r"\bfo1_[A-Za-z0-9_\-]{43}\b"),
    ("dockerhub_token", r"\bdckr_pat_[A-Za-z0-9_\-]{27,}"),
    ("planetscale_token", r"\bpscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{30,}"),
    ("sonar_token", r"\bsq[pau]_[a-f0-9]{40}\b"),
    ("contentful_token", r"\bCFPAT-[A-Za-z0-9_\-]{43}\b"),
    ("shippo_token", r"\bshippo_(?:live|test)_[a-f0-9]{40}\b"),
    ("braintree_token", r"\baccess_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}\b"),
    ("plaid_token", r"\baccess-(?:sandbox|development|production)-[a-f0-9\-]{36}\b"),
    ("dynatrace_token", r"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b"),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    # The signature of a signed URL: Azure SAS, S3 and GCS presigned URLs.
    ("url_signature", r"(?<=[?&])(?i:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)="
                      r"(?P<sig>[A-Za-z0-9%+/=_\-.]{16,})"),
    # user:password@ in a URL; the password may hold "@" (the last one before the host counts).
    ("url_credentials", r"\b[a-zA-Z][a-zA-Z0-9+.\-]{0,20}://[^\s:/@\"'<>]{0,100}:(?P<urlpw>[^\s/\"'<>]{1,200})"
                        r"@(?=[A-Za-z0-9\[_])"),
    # A key as a URL's user (a Sentry DSN: https://<key>@o1.ingest.sentry.io/2): random, not a name.
    ("url_key", r"\b[a-zA-Z][a-zA-Z0-9+.\-]{0,20}://(?P<urlkey>[A-Za-z0-9_\-]{16,200})@"),
    ("bearer", r"(?i:\b(?:bearer|basic))\s+(?P<bearer_value>[A-Za-z0-9_\-\.=+/]{12,})"),
    # An Authorization header's credentials under any other scheme or none (GitHub's `token
    # <40 hex>`, an API's bare key): whatever follows the header is a credential, a hex run too;
    # 12 or more token characters holding a digit, so "Authorization: required" stays prose.
    ("authorization", r"(?i:\b(?:proxy-)?authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?!(?i:bearer|basic)\s)"
                      r"(?:[A-Za-z][A-Za-z0-9_\-]{0,30}[ \t]+)?(?P<authz>(?=[A-Za-z_\-.=+/~]*\d)[A-Za-z0-9_\-.=+/~]{12,})"),
    # A Cookie or Set-Cookie header's values: a session's cookie is a login (`_cookie` judges each).
    ("cookie", r"(?i:\b(?:set-)?cookie)[\"']?[ \t]*[:=][ \t]*[\"']?"
               r"(?P<cookies>[^=;,\s\"'\\]{1,200}=[^;\s\"'\\]*(?:;[ \t]*[^=;,\s\"'\\]{1,200}(?:=[^;\s\"'\\]*)?){0,50})"),
    # Passwords given to a command as arguments.
    ("cli", r"(?:\b(?:mysql|mariadb)[a-z\-]*\b[^\n|;&]{0,200}?\s-p(?P<cli_a>[^\s\-|;&'\"][^\s|;&]*|'[^'\n]+'|\"[^\"\n]+\")"
            r"|\bsshpass\s+-p\s*(?P<cli_b>\S+)"
            r"|\b(?:7z|7za|7zz|rar|unrar)\b[^\n|;&]{0,200}?\s-p(?P<cli_c>[^\s\-|;&]\S*)"
            r"|\b(?:zip|unzip|sqlcmd|bcp|isql|osql)\b[^\n|;&]{0,200}?\s-P\s*(?P<cli_d>[^\s\-]\S*)"
            r"|\b(?:redis-cli|keydb-cli)\b[^\n|;&]{0,200}?\s(?:-a|--pass)\s+(?P<cli_e>\S+)"
            r"|\b(?:login|mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport)\b[^\n|;&]{0,200}?\s-p\s+(?P<cli_f>[^\s\-]\S*)"
            r"|\bldap[a-z]+\b[^\n|;&]{0,200}?\s-w\s+(?P<cli_g>\S+)"
            r"|\bhtpasswd\s+-[a-zA-Z]*b[a-zA-Z]*\s+\S+\s+\S+\s+(?P<cli_h>\S+)"
            r"|-(?:pass(?:in|out)?|password)\s+pass:(?P<cli_i>\S+)"
            r"|-(?:src|dest|new)?(?:store|key)pass\s+(?P<cli_j>\S+)"
            r"|\bxfreerdp\b[^\n]{0,200}?\s/p:(?P<cli_l>\S+)"
            r"|(?<=\s)(?:-u|-U|--user|--proxy-user|--username)(?:\s+|=)(?:(?P<cliq>['\"])(?P<cli_user2>[^:'\"\n]{1,100})"
            r":(?P<cli_k2>[^'\"\n]{1,200})(?P=cliq)|(?P<cli_user>[^\s:'\"%]{1,100})[:%](?P<cli_k>[^\s'\"]{1,200})))"),
    ("sql_password", r"(?i:\bidentified\s+(?:with\s+\w+\s+)?by\s+(?:password\s+)?)(?P<sqlq>['\"])(?P<sqlpw>[^'\"\n]{1,200})(?P=sqlq)"),
    # A secret word (alone or inside an identifier such as DB_PASSWORD or apiToken) and what
    # follows it on the same line, up to 120 characters: `_words` decides what is the value.
    ("word", r"(?i:\b(?:[A-Za-z0-9]{0,30}?[_\-]?)" + _SECRET_WORD +
             r"(?:s|_[A-Za-z0-9_]{1,30}|-[A-Za-z0-9\-]{1,30})?\b)"),
    ("foreign", r"(?i:\b(?:" + _FOREIGN_LATIN + r")\b|(?:" + _FOREIGN_OTHER + r"))"),
    # A name whose last part is a weak secret word, then (in `_name`) its assignment.
    # "pw" alone is a name too when a value is assigned to it (`pw: hunter2xyz`, `PW=…`), and "pass"
    # or "Pass", with ":" or "=" or before a value random or a password's ("console login: x@y.com
    # pass: …", "user root pass Hfck…": public15, session 49, typed whole); "PASS", "key"
    # or "auth" alone are not (a test runner's `PASS: TestFoo`, a YAML map's `key: name`).
    ("name", r"(?:(?<![A-Za-z0-9_\-.])(?:(?i:pw)(?=(?:\\?[\"'])?\]? *(?::=|=>|[:=：]))|[Pp]ass(?=(?:\\?[\"'])?\]? *(?::=|=>|[:=：])| +\S))|"
             r"[A-Za-z_][A-Za-z0-9_\-.]{0,60}?(?i:" + _WEAK + r"))(?![A-Za-z0-9_])"
             r"(?=(?:\\?[\"'])?\]? *(?::=|=>|[:=：])| +\S)"),
    # base64 of a PEM block ("-----BEGIN"): kubeconfig's client-key-data, a Secret's tls.key.
    ("b64_pem", r"(?<![A-Za-z0-9+/=])LS0tLS1CRUdJTi[A-Za-z0-9+/]*={0,2}"),
    # base64 of a JSON object (not a JWT's part): a docker config, a service account's credentials.
    ("b64_json", r"(?<![A-Za-z0-9+/=_\-.])eyJ[A-Za-z0-9+/_\-]{12,4000}={0,2}(?![A-Za-z0-9+/=_\-.])"),
    # A bare DER body (a PEM block without its armour): base64 of an ASN.1 SEQUENCE, "MI..",
    # "MH.." or "MC4..", over lines.
    ("der", r"(?<![A-Za-z0-9+/=])M[IHC][A-Za-z0-9+/]{40,}={0,2}(?:(?:\\n|\s){1,4}[A-Za-z0-9+/]{16,}={0,2})*"),
    # A bare OpenSSH private key body: base64 of "openssh-key-v1\0".
    ("openssh_key", r"\bb3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]*={0,2}(?:(?:\\n|\s){1,4}[A-Za-z0-9+/]{16,}={0,2})*"),
    # Azure storage account keys: 64 random bytes, 86 base64 characters and "==".
    ("azure_account_key", r"(?<![A-Za-z0-9+/=\-])[A-Za-z0-9+/]{86}==(?![A-Za-z0-9+/=])"),
    # Azure AD client secrets: 3 characters, a digit, "Q~", then 31-34 more.
    ("azure_client_secret", r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_\-.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])"),
    # AWS secret access keys: exactly 40 characters of [A-Za-z0-9/+], on their own.
    ("aws_secret_key", r"(?<![A-Za-z0-9+/=\-_.])[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=\-_]|\.[A-Za-z0-9])"),
    # Padded base64 on its own that may decode to user:password (a credentials blob).
    ("b64_creds", r"(?<![A-Za-z0-9+/=_\-.])[A-Za-z0-9+/]{6,400}={1,2}(?![A-Za-z0-9+/=_\-.])"),
    # A key typed or pasted as a line of its own, with no word before it: 40 letters and digits or
    # more (a run the gate's _RUN finds), random as keys are (_lone_key: both cases, digits, a key's spread; not a line
    # of a base64 block). public15 (session 49): a person answered the agent's question with a
    # 64-character API key alone, stored whole.
    ("lone_key", r"(?<![^\n])(?P<lone_pre>[ \t]*(?:[-*•>] +)?)(?P<lone_val>[A-Za-z0-9]{40,256})(?=[ \t]*(?:\r?\n|\Z))"),
]
_ORDER = {name: i for i, (name, _) in enumerate(_BRANCHES)}
_NOT_CUT = frozenset(name for name, _ in _BRANCHES if name != "cut_token")
# Branches that keep their context and redact only one group.
_VALUE_GROUP = {"url_signature": "sig", "url_credentials": "urlpw", "bearer": "bearer_value", "sql_password": "sqlpw",
                "authorization": "authz"}
# Kinds reported under another name than their branch.
_KIND = {"url_signature": "signature", "vault_legacy": "vault-token", "pem_tail": "private-key",
         "putty_key": "private-key", "b64_pem": "private-key", "b64_json": "credentials", "b64_creds": "credentials"}

# Values after a secret word that are clearly not secrets: numbers, placeholders, references
# (GitHub Actions' `secrets: inherit`, which hands a caller's secrets on to a reusable workflow).
_PLACEHOLDER = _later(
    r"^(?:[\d.,]+[kKmM]?|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$\(.*|%[A-Za-z_]+%?|\{\{.*|<[^>]*>?|\*+|x+|X+|\.\.\.|…|"
    r"null|nil|none|true|false|yes|no|on|off|undefined|inherit|\[REDACTED[^\]]*\]?|process\.env\.[A-Za-z0-9_.]+|os\.environ.*|"
    r"(?:os\.)?getenv.*|env\(.*|secrets\.[A-Za-z0-9_.]+|vault:.*|op://.*|"
    # an attribute or call in code: settings.SECRET_KEY, args.token, get_password()
    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(.*)?|[A-Za-z_][A-Za-z0-9_]*\(.*)$", re.I)
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
see ask check below above later elsewhere tbd todo
""".split())
# A passphrase is words ("passphrase: correct horse battery staple"): after a word for one and its
# connector, a run of three to twelve words to the line's or the clause's end is its value when
# none of them is a word prose needs (an article, a preposition, a pronoun, a verb's helper, a
# pointer elsewhere): "passphrase: see the wiki", "passphrase is stored in 1Password" keep theirs.
_PHRASE_WORD = _later(r"(?i)pass[ _\-]?phrase")
_PHRASE = _later(r"[A-Za-z][A-Za-z'’\-]*(?:[ \t]+[A-Za-z][A-Za-z'’\-]*){2,11}(?=[ \t]*(?:[.,;!?)\]]|\n|\\n|$))")
_FUNCTION_WORDS = frozenset("""
a an the this that these those it its is are was were be been being not no never none nothing in on at of for to
from with by as into onto via per and or but if then so than see ask check use using stored saved kept set same
different empty required optional needed unknown here there where what which who whom how why when we you i me my
our your they them their he she his her do does did done has have had should must will would can could may might
now still also just only already again yet please enter type give provide
""".split())
_PROSE_SUFFIX = _later(r"^[a-z]+(?:ed|ing|ly|able|ible|ment|tion|sion|ness|ous|ive|ful|less)$")
_CONNECTOR = _later(r"""^\\?["']?(?:[ \t]+[\w.\-/']{1,20}){0,3}?\s*(?:[:=：＝]{1,2}|=>|->|\bis\b|\bwas\b|\bare\b|"""
                    r"\bequals\b|\bset to\b|\bis set to\b|\bof\b|\bbecomes\b)\s*", re.I)
# "::" right after a secret word and before a name names a thing inside it (Rust's
# `associated_token::idempotent`, C++'s `token::kind`): nothing is assigned ("password::=x",
# "password:: x" still assign).
_PATH_SEPARATOR = _later(r"::(?=[A-Za-z_])")
# After a word in another language: its "is" (es, fr, de, pt, it, nl, pl, sv, cs, id, ru) or
# particle (ja, zh, ko), after at most five short words ("la contraseña de la base de datos es").
_FOREIGN_CONNECTOR = _later(
    r"^\\?[\"'»」]?(?:[ \t]+[\w'’.\-]{1,20}){0,5}?\s*(?:[:=：＝]{1,2}|[—–]|-(?=\s)|\b(?:es|era|son|est|c'est|ist|lautet|war|"
    r"é|è|era|is|jest|är|je|adalah|это|є)\b|は|が|を|是|为|為|设为|設為|改为|는|은|이|가)\s*(?:[:=：]\s*)?", re.I)
# CJK, kana and hangul end a value written after them without a space ("パスワードはhunter2です").
_CJK = "\u3000-\u30ff\u3400-\u9fff\uac00-\ud7af\uff01-\uff0f\uff1a-\uff20"
_VALUE = _later(r"\s*\\?(?P<q>[\"'`「『“])?(?P<v>(?(q)[^\n\"'`」』”]{1,400}|"
                r"(?:[^\s\"'`,;)(\]\[{}<>&|\\" + _CJK + r"]|&(?![A-Za-z_][\w.\-]*=)){1,200}))")
# Words after which a hex run is an object's name, not a secret ("token ... commit 9fceb02").
_NAMING = frozenset("commit sha sha1 sha256 hash digest checksum revision rev id uuid request trace build "
                    "version image file path line column count length limit size".split())
_HEX = _later(r"^[0-9a-fA-F]+$")
_WORD = _later(r"[^\s]+")
_PUBLIC_PEM = _later(r"CERTIFICATE|PUBLIC KEY|PARAMETERS|X509 CRL|CERTIFICATE REQUEST")
_PASSWORD_WORD = _later(r"(?i)(?:pass(?:word|wd|phrase)|pwd)$")


# A gate in front of the pattern: substrings some branch needs, each followed (where a bare
# substring would be common) by a pattern the branch implies, searched for in the text
# folded to lowercase. Text the gate rejects holds no match. Most text holds none, and the
# gate reads it tens of times faster than the pattern does (the case-insensitive secret
# word, tried at every token start, makes the pattern slow).
# The name branch's last parts (as the gate reads them, folded) and what must follow one.
_NAME_WEAK = ("pass", "pw", "key", "auth", "dsn", "webhook", "cred(?:entials?|s)?")
_NAME_AFTER = r"(?![a-z0-9_])(?:[\"'\]\\]{0,3} *[:=：]| +\S)"
# (needle, the pattern that must follow where it is found or None, its branches); compiled into
# _NEEDLES by ready().
_NEEDLE_SPECS = [(needle, precise, tuple(branches.split()))
                 for needle, precise, branches in [
    ("-----begin ", None, "pem"), ("-----end ", r"-----end [a-z0-9 ]{0,30}private", "pem_tail"),
    ("private-lines:", None, "putty_key"), ("age-secret-key-1", None, "age_key"),
    # cut_token: a prefix, token characters, then a line's or the text's end or an ellipsis
    *[(needle, needle + r"[a-z0-9_\-]*[ \t]*(?:\r|\n|\\[rn]|$|…)", "cut_token")
      for needle in ("sk-", "k_live_", "k_test_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox",
                     "xapp-", "akia", "asia", "aroa", "aida", "aiza", "gocspx-", "npm_", "hf_", "gsk_", "xai-",
                     "pplx-", "dckr_pat_", "glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "glimt-", "gloas-",
                     "glft-", "glsoat-", "glagent-")],
    ("sk-", r"sk-[a-z0-9_\-]{20}", "anthropic_key openai_key"), ("sk.eyj", None, "mapbox_key"),
    ("k_live_", None, "stripe_key"), ("k_test_", None, "stripe_key"), ("whsec_", None, "stripe_webhook"),
    ("ghp_", None, "github_token"), ("gho_", None, "github_token"), ("ghu_", None, "github_token"),
    ("ghs_", None, "github_token"), ("ghr_", None, "github_token"), ("github_pat_", None, "github_token"),
    ("gl", r"gl[a-z]{1,5}-[a-z0-9_\-]{20}", "gitlab_token"), ("xox", r"xox[abposre]-", "slack_token"),
    ("xapp-", None, "slack_token"),
    ("hooks.slack.com/", None, "slack_webhook"), ("/api/webhooks/", None, "discord_webhook"),
    (".webhook.office.com/", None, "teams_webhook"), ("hooks.zapier.com/", None, "zapier_webhook"),
    ("://", r"://[^\s:/@\"'<>]{0,100}:[^\s/\"'<>]{1,200}@", "url_credentials"),
    ("://", r"://[a-z0-9_\-]{16,200}@", "url_key"),
    ("akia", None, "aws_access_key"), ("asia", None, "aws_access_key"), ("aroa", None, "aws_access_key"),
    ("aida", None, "aws_access_key"), ("fwogzxivyxdze", None, "aws_session_token"),
    ("iqojb3jpz2lux2vj", None, "aws_session_token"), ("aiza", None, "google_api_key"),
    ("ya29.", None, "google_oauth"), ("1//0", r"1//0[0-9a-z_\-]{40}", "google_refresh_token"), ("gocspx-", None, "google_client_secret"), (":apa91b", None, "firebase_key"),
    ("npm_", None, "npm_token"), ("pypi-age", None, "pypi_token"), ("rubygems_", None, "rubygems_key"),
    ("hf_", None, "huggingface_token"), ("r8_", None, "replicate_token"), ("gsk_", None, "groq_key"),
    ("xai-", None, "xai_key"), ("pplx-", None, "perplexity_key"), ("lsv2_", None, "langsmith_key"),
    ("sg.", r"sg\.[a-z0-9_\-]{16,}\.", "sendgrid_key"), ("key-", r"key-[0-9a-z]{32}", "mailgun_key"),
    ("-us", r"[0-9a-f]{32}-us\d", "mailchimp_key"), ("sk", r"sk[0-9a-f]{32}", "twilio_key"),
    (":aa", r"\d{8}:aa[a-z0-9_\-]{33}", "telegram_token"), ("_v1_", None, "digitalocean_token"),
    ("shpat_", None, "shopify_token"), ("shpss_", None, "shopify_token"), ("shpca_", None, "shopify_token"),
    ("shppa_", None, "shopify_token"), ("hvs.", None, "vault_token"), ("hvb.", None, "vault_token"),
    ("hvr.", None, "vault_token"), ("s.", r"s\.(?<![a-z0-9_.]s\.)[a-z0-9]{24}(?![a-z0-9_.])", "vault_legacy"),
    ("hrku-", None, "heroku_key"), ("lin_api_", None, "linear_key"), ("lin_oauth_", None, "linear_key"),
    ("dp.", r"dp\.(?:st|ct|sa|scim|audit|pt)\.", "doppler_token"), ("pmak-", None, "postman_key"),
    ("atatt", None, "atlassian_token"), ("atctt", None, "atlassian_token"), ("atbb", None, "bitbucket_token"),
    ("sq0", None, "square_token"), ("eaaa", r"eaaa[a-z0-9_\-+=]{60}", "square_token"),
    ("dapi", r"dapi[a-f0-9]{32}", "databricks_token"), ("glsa_", None, "grafana_token"),
    ("glc_", None, "grafana_token"), ("nrak-", None, "newrelic_key"), ("nrjs-", None, "newrelic_key"),
    ("nrii-", None, "newrelic_key"), ("sntrys_", None, "sentry_token"), ("sntryu_", None, "sentry_token"),
    ("sbp_", None, "supabase_token"), ("pul-", None, "pulumi_token"), ("secret_", r"secret_[a-z0-9]{43}", "notion_token"),
    ("ntn_", None, "notion_token"), ("tskey-", None, "tailscale_key"), ("ops_eyj", None, "onepassword_token"),
    ("bkua_", None, "buildkite_token"), ("ltai", None, "alibaba_key"), (".atlasv1.", None, "terraform_token"),
    ("figd_", None, "figma_token"), ("nfp_", None, "netlify_token"), ("fo1_", None, "fly_token"),
    ("dckr_pat_", None, "dockerhub_token"), ("pscale_", None, "planetscale_token"),
    ("sq", r"sq[pau]_[a-f0-9]{40}", "sonar_token"), ("cfpat-", None, "contentful_token"),
    ("shippo_", None, "shippo_token"), ("access_token$", None, "braintree_token"),
    ("access-", r"access-(?:sandbox|development|production)-", "plaid_token"), ("dt0c01.", None, "dynatrace_token"),
    ("eyj", r"eyj[a-z0-9_\-]{8,}\.eyj", "jwt"), ("eyj", r"eyj[a-z0-9+/_\-]{12}", "b64_json"),
    ("sig=", None, "url_signature"), ("signature=", None, "url_signature"),
    ("x-amz-security-token=", None, "url_signature"), ("q~", None, "azure_client_secret"),
    ("bearer", r"(?:bearer|basic)\s+[a-z0-9_\-.=+/]{12}", "bearer"),
    ("basic", r"(?:bearer|basic)\s+[a-z0-9_\-.=+/]{12}", "bearer"),
    ("authorization", r"authorization[\"']?[ \t]*[:=]", "authorization"),
    ("cookie", r"cookie[\"']?[ \t]*[:=]", "cookie"),
    ("ls0tls1crudjti", None, "b64_pem"), ("b3blbnnzac1rzxktdje", None, "openssh_key"),
    ("mysql", None, "cli"), ("mariadb", None, "cli"), ("sshpass", None, "cli"), ("7z", None, "cli"),
    ("rar", None, "cli"), ("zip", None, "cli"), ("sqlcmd", None, "cli"), ("bcp", None, "cli"), ("isql", None, "cli"),
    ("osql", None, "cli"), ("redis-cli", None, "cli"), ("keydb-cli", None, "cli"), ("login", None, "cli"),
    ("mongo", None, "cli"), ("ldap", None, "cli"), ("htpasswd", None, "cli"), ("pass:", None, "cli"),
    ("pass", r"pass(?:(?<=storepass)|(?<=keypass))\s", "cli"), ("xfreerdp", None, "cli"),
    ("-u", r"-u(?<=\s-u)(?:\s|=)", "cli"),
    ("--user", None, "cli"),
    ("--proxy-user", None, "cli"), ("--username", None, "cli"), ("identified", None, "sql_password"),
    ("pass", r"pass(?:word|wd|phrase)", "word"), ("pwd", None, "word"), ("secret", None, "word"),
    ("token", None, "word"),
    ("key", r"(?:api|access|private|auth|account|licen[cs]e|encryption|signing|master|recovery|product|activation|"
            r"hmac|aes|cipher)[ _\-]?key|apikey", "word"),
    ("contrase", None, "foreign"), ("passwort", None, "foreign"), ("passwört", None, "foreign"),
    ("passwoert", None, "foreign"), ("kennw", None, "foreign"), ("geheimnis", None, "foreign"),
    ("schlüssel", None, "foreign"), ("schluessel", None, "foreign"), ("passe", r"(?:de |a[- ])passe(?![a-z])", "foreign"),
    ("mdp", None, "foreign"), ("clé", None, "foreign"), ("clef", None, "foreign"), ("senha", None, "foreign"),
    ("segre", None, "foreign"), ("secreto", None, "foreign"), ("chave", None, "foreign"), ("chiav", None, "foreign"),
    ("parola d", None, "foreign"), ("clave", None, "foreign"), ("wachtwoord", None, "foreign"),
    ("hasło", None, "foreign"), ("haslo", None, "foreign"), ("şifre", None, "foreign"), ("sifre", None, "foreign"),
    ("lösenord", None, "foreign"), ("losenord", None, "foreign"), ("heslo", None, "foreign"),
    ("salasana", None, "foreign"), ("jelsz", None, "foreign"), ("kata sandi", None, "foreign"),
    ("парол", None, "foreign"), ("секрет", None, "foreign"), ("ключ", None, "foreign"), ("токен", None, "foreign"),
] + [(word, None, "foreign") for word in _FOREIGN_OTHER.split("|")] + [
    (weak[:4], weak + _NAME_AFTER, "name") for weak in _NAME_WEAK
]]
# der, azure_account_key, aws_secret_key: a run of 40 base64 characters, found as a run of
# 40 marks once every base64 byte is a mark and every other byte a space ("=" stays "=").
_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_MARKS = bytes(b"x"[0] if c in _BASE64 else b"="[0] if c == b"="[0] else b" "[0] for c in range(256))
_RUN = b"x" * 40
_PADDED = (b"xxxxxx= ", b"xxxxxx==")   # b64_creds: a run of 6 or more, its padding, then not base64
# discord_token: base64url runs around a 6-character middle part, found in marks of [A-Za-z0-9_-] and "."
_URL_SAFE = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_URL_MARKS = bytes(b"x"[0] if c in _URL_SAFE else b"."[0] if c == b"."[0] else b" "[0] for c in range(256))
_DISCORD = b"." + b"x" * 6 + b"." + b"x" * 27
# Four letters outside ASCII that an IGNORECASE pattern matches to ASCII ones. lower()
# folds K to k; İ (the one letter lower() makes two characters), ı and ſ are folded here.
_FOLDS = (("İ", "i"), ("ı", "i"), ("ſ", "s"))


def _needle_patterns(needles) -> list:
    """The patterns finding where any of the needles starts, one per first character (each an
    alternation of the needles opening with it, longest first), compiled by ready(). A match is
    the longest needle at its place; a needle inside it is found by _INSIDE (`_found`). Every
    needle at one place opens with the same character, so the pattern of that character finds
    what one pattern of all of them would there; each opening with its one literal, the engine
    runs to the next place that character is at once, where one alternation of all their opening
    characters (48, nearly every letter) was tried at nearly every place: a third more time."""
    return [head + "(?:" + "|".join(rests) + ")" for head, rests in _groups(map(re.escape, set(needles))).items()]


def _grouped(alternatives) -> re.Pattern:
    """The alternation of regular expressions that each begin with one literal character (a
    letter, digit or "-", or an escaped one), grouped by that character, longest first.
    Matches where any of them matches (the order only picks which one, at one place)."""
    return _later("|".join(head + "(?:" + "|".join(rests) + ")" for head, rests in _groups(alternatives).items()))


def _groups(alternatives) -> dict:
    """{the literal character they open with: [the rest of each, longest first]} of _grouped's alternatives."""
    groups = {}
    for alt in sorted(set(alternatives), key=len, reverse=True):
        head = alt[:2] if alt[0] == "\\" else alt[0]
        assert (not head[1].isalnum()) if len(head) == 2 else head not in "([.^$*+?{|)\\", alt
        groups.setdefault(head, []).append(alt[len(head):])
    return groups


def _found(low: str) -> set:
    """The needles that start somewhere in low: the longest at each place a needle starts
    (each place tried, also inside a needle found before)."""
    found = set()
    for pattern in _NEEDLE_RES:
        search, pos = pattern.search, 0
        while (m := search(low, pos)) is not None:
            found.add(m.group())
            pos = m.start() + 1
    return found


_NEEDLE_SOURCES = _needle_patterns(n for n, _, _ in _NEEDLE_SPECS)
_NEEDLE_RES: tuple = ()    # compiled by ready()


def _possible(text: str) -> frozenset:
    """The branches that may match somewhere in text (the others cannot: their needle is not
    in it); none, and redact(text) is text unchanged. Remembered per text (_Kept): the output
    of a failed call is cut for its error episode, its aftermath and its passage, each cut
    looking at the same text (a quarter of the gate's characters on the public corpus)."""
    found = _GATES.get(text)
    if found is None:
        found = frozenset(_gate(text)[0])   # (_gate readies the patterns)
        _GATES.put(text, found)
    return found


def _gate(text: str):
    """(_possible(text), the needles of anchored branches in text, folded)."""
    ready()
    low = _folded(text)
    return _judged(low, _found(low))


def _judged(low: str, needles) -> tuple:
    """_gate's answer for a folded text from the needles that start in it (_found)."""
    found, anchors = set(), set()
    for needle in needles:
        for precise, branches in _INSIDE[needle]:
            if precise is None or precise.search(low):
                found.update(branches)
        anchors.update(_ANCHORS_INSIDE[needle])
    raw = low.encode("utf-8", "surrogatepass")
    marks = raw.translate(_MARKS) + b" "
    if _RUN in marks:
        found.update(("der", "azure_account_key", "aws_secret_key", "lone_key"))
    if _PADDED[0] in marks or _PADDED[1] in marks:
        found.add("b64_creds")
    if _DISCORD in raw.translate(_URL_MARKS):
        found.add("discord_token")
    return found, anchors


def _marked(marks: bytes, raw: bytes) -> bool:
    """Whether _judged would find any of its marks in a folded text's bytes (raw, and marks: raw
    translated by _MARKS, a space after it)."""
    return _RUN in marks or _PADDED[0] in marks or _PADDED[1] in marks or _DISCORD in raw.translate(_URL_MARKS)


# No needle holds a line break: searched in texts joined by "\n", a needle found lies in one text.
assert not any("\n" in needle for needle, _, _ in _NEEDLE_SPECS)


def _possible_each(texts) -> dict:
    """{text: _possible(text)} for each distinct string among texts, the needles of all of them
    found in one search (by _found's patterns) of their folded texts joined by line breaks, where
    each place a needle starts is tried: no needle holds a line break, so each one found lies
    inside one text and is the one _found finds at that place in that text alone (the longest
    that fits there: none of the longer ones runs on into the next text); the rest of the gate
    (_judged) reads each text alone. The same answers as _possible, one search instead of one
    per text."""
    ready()
    gates, todo = {}, []
    for text in dict.fromkeys(texts):
        if isinstance(text, str):
            known = _GATES.get(text)
            if known is None:
                todo.append(text)
            else:
                gates[text] = known
    lows = [_folded(text) for text in todo]
    joined = "\n".join(lows)
    ends, end = [], -1       # where each text's line break is (the last one's: the end)
    for low in lows:
        end += len(low) + 1
        ends.append(end)
    needles = [set() for _ in lows]
    for pattern in _NEEDLE_RES:
        search, pos, i = pattern.search, 0, 0
        while (m := search(joined, pos)) is not None:
            pos = m.start()
            while ends[i] < pos:
                i += 1
            needles[i].add(m.group())
            pos += 1
    # _judged's marks (a base64 run, padding, a Discord token's shape) looked for in all the texts
    # at once: each text's marks end in a space, as the line break between two texts reads, and
    # no mark holds a space but at its end, so one is in the joined texts only if it is in one of
    # them. A text with no needle then passes the gate with nothing, and is not read again.
    raw = joined.encode("utf-8", "surrogatepass")
    marked = _marked(raw.translate(_MARKS) + b" ", raw)
    for text, low, found in zip(todo, lows, needles):
        gates[text] = answer = frozenset(_judged(low, found)[0]) if found or marked else _NOTHING
        _GATES.put(text, answer)
    return gates


def _folded(text: str) -> str:
    """text in lowercase, as IGNORECASE sees it, character for character (positions hold)."""
    if text.isascii():
        return text.lower()
    for letter, ascii_letter in _FOLDS:
        if letter in text:
            text = text.replace(letter, ascii_letter)
    return text.lower()


# Branches tried only near their needles, not at every token start: a match of one of them holds
# one of its needles within REACH characters of its start (a 60-character name before "pass",
# "shared access " and a 30-character identifier before "key"), and the case-insensitive words
# are what makes the pattern slow where it is tried everywhere.
_ANCHORED = frozenset(("word", "foreign", "name", "cli", "sql_password"))
REACH = 64
WORD_REACH = REACH   # the name tests and older callers know
# Where an anchored branch may match: each needle of theirs, or the pattern standing in for it,
# written to open with a literal (`_grouped`). Each alternative matches wherever the gate's
# pattern for the needle does, or more (`-u` without the space before it): a window is never
# missed, and grouped, the anchors cost a few times less to find than as one flat alternation.
_ANCHOR_ALTERNATIVES = (
    [re.escape(n) for n, p, b in _NEEDLE_SPECS if set(b) & _ANCHORED and p is None]
    + [r"pass(?:(?<=storepass)|(?<=keypass))\s", r"\-u(?<=\s-u)(?:\s|=)", r"pass(?:word|wd|phrase)", r"apikey", r"de passe(?![a-z])",
       r"a[- ]passe(?![a-z])"]
    + [word + r"[ _\-]?key" for word in ("api", "access", "private", "auth", "account", "licence", "license",
                                         "encryption", "signing", "master", "recovery", "product", "activation",
                                         "hmac", "aes", "cipher")]
    + [weak + _NAME_AFTER for weak in _NAME_WEAK])
_ANCHOR_RE = _grouped(_ANCHOR_ALTERNATIVES)
_TOKEN_START = _later("(?<![A-Za-z0-9])")   # where every branch may start (_pattern_of)


class _Near:
    """The matches of anchored branches, leftmost first, tried only at the token starts up to
    REACH characters before each place an anchor of theirs is found."""

    def __init__(self, text: str, branches: frozenset):
        self.text, self.pattern = text, _pattern_of(branches)
        self.windows = [(max(0, m.start() - REACH), m.end()) for m in _ANCHOR_RE.finditer(_folded(text))]
        self.w = 0

    def search(self, pos: int):
        """The leftmost match starting at pos or after, or None."""
        text, pattern, windows = self.text, self.pattern, self.windows
        while self.w < len(windows):
            start, end = windows[self.w]
            p = max(start, pos)
            while p <= end:
                m = pattern.match(text, p)
                if m is not None:
                    return m
                found = _TOKEN_START.search(text, p + 1, end + 1)
                # at the text's end search() clamps to it and finds p again: stop there
                p = found.start() if found and found.start() > p else end + 1
            self.w += 1
        return None


@lru_cache(maxsize=256)
def _pattern_of(branches: frozenset) -> re.Pattern:
    """The pattern with only these branches, in their order: where the others cannot match, it
    finds what the whole pattern finds, faster. Every branch starts where a token starts (none
    inside a run of letters and digits), so one look-behind rejects most positions before any
    branch is tried. Compiled when first needed: the whole one takes tens of ms, a command's start."""
    ready()
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
    return _joined(text, _spans(text, frozenset(branches))) if branches else text


def _spans(text: str, branches: frozenset) -> list:
    """[(start, end, replacement)] of every redaction in text, in order: what one pass of the
    pattern of these branches makes, the anchored ones looked for only near their anchors."""
    return list(_each_span(text, branches))


def _each_span(text: str, branches: frozenset):
    """_spans(text, branches), one at a time: a caller that needs only the start of the text
    stops when it has it, and the rest is never searched."""
    near = branches & _ANCHORED
    free = branches - near
    if "word" in near and not branches & _WORD_SHADOWS and not _value_may_follow(_folded(text)):
        near = near - _JUST_WORD   # each secret word here would be kept as it is: not tried
    a = _Near(text, near) if near else None
    b = _pattern_of(free) if free else None
    pos = 0
    ma = a.search(0) if a else None
    mb = b.search(text) if b else None
    while ma is not None or mb is not None:
        if mb is None or (ma is not None and (ma.start(), _ORDER[ma.lastgroup]) < (mb.start(), _ORDER[mb.lastgroup])):
            m = ma
        else:
            m = mb
        replacement, end = _replace(m)
        if replacement != text[m.start():end]:
            yield m.start(), end, replacement
        pos = max(end, m.start() + 1)
        if ma is not None and ma.start() < pos:
            ma = a.search(pos)
        if mb is not None and mb.start() < pos:
            mb = b.search(text, pos)


def _joined(text: str, spans: list) -> str:
    if not spans:
        return text
    out, pos = [], 0
    for start, end, replacement in spans:
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _redact(text: str, pattern: re.Pattern | None = None) -> str:
    """redact() without the gate: the pattern (by default the whole one) over the whole text,
    tried at every position (what the gate and the anchors must not change)."""
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
    if kind in _HANDLERS:
        return _HANDLERS[kind](m)
    label = _KIND.get(kind) or kind.replace("_", "-")
    group = _VALUE_GROUP.get(kind)
    if group:
        start, end = m.span(group)
        wrapped = _through_wrap(m.string, start, end) if end == m.end() else end   # "Bearer ghp_…" wrapped
        if wrapped > end:
            return whole[: start - m.start()] + f"[REDACTED:{label}]", wrapped
        return whole[: start - m.start()] + f"[REDACTED:{label}]" + whole[end - m.start():], m.end()
    return f"[REDACTED:{label}]", m.end()


def _pem(m):
    keep = _PUBLIC_PEM.search(m.group("pem_label"))
    return (m.group(0) if keep else "[REDACTED:private-key]"), m.end()


def _der(m):
    whole = m.group(0)
    if _is_private_der(whole):
        return "[REDACTED:private-key]", m.end()
    end = _body_end(whole)   # a public body: kept, as far as its lines have a body's widths
    return whole[:end], m.start() + end


def _aws_secret(m):
    whole = m.group(0)
    return ("[REDACTED:aws-secret-key]" if _looks_random(whole, 40) else whole), m.end()


_BLOCK_LINE = _later(r"[A-Za-z0-9+/=_\-]{40,}")


def _lone_key(m):
    """A line that is one random token of 40 characters or more, alone: not one line of a base64
    block (a certificate's body, an image), whose lines before or after are the same shape."""
    whole, text, pre = m.group("lone_val"), m.string, m.group("lone_pre")
    above = m.start() - 1                   # the line break before the match (-1: the text's first line)
    before = text[text.rfind("\n", 0, above) + 1:above] if above >= 0 else ""
    below = text.find("\n", m.end())        # the line break after it
    end = text.find("\n", below + 1) if below >= 0 else -1
    after = text[below + 1:end if end >= 0 else len(text)] if below >= 0 else ""
    if any(_BLOCK_LINE.fullmatch(line.strip().lstrip("-*•> ")) for line in (before, after) if line.strip()):
        return pre + whole, m.end()
    letters = [c for c in whole.lower() if c.isalpha()]
    vowels = sum(c in "aeiou" for c in letters)
    # a name written together ("testShouldReturnTheUser…2") has words' vowels, a third of its
    # letters; random letters have one in five
    random = _looks_random(whole, 40) and len(whole) - len(letters) >= 3 and 10 * vowels < 3 * len(letters)
    return pre + ("[REDACTED:secret]" if random else whole), m.end()


def _azure_account(m):
    whole = m.group(0)
    return ("[REDACTED:azure-account-key]" if _looks_random(whole[:-2], 86) else whole), m.end()


def _random_only(label):
    def handle(m):
        whole = m.group(0)
        value = whole.split(".", 1)[-1]
        return (f"[REDACTED:{label}]" if _looks_random(value, len(value)) else whole), m.end()
    return handle


def _twilio(m):
    whole = m.group(0)
    return ("[REDACTED:twilio-key]" if any(c.isdigit() for c in whole[2:]) and any(c.isalpha() for c in whole[2:])
            else whole), m.end()


def _url_key(m):
    key = m.group("urlkey")
    if _looks_random(key, 16) or (len(key) >= 32 and _HEX.match(key)):
        start, end = m.span("urlkey")
        return m.group(0)[: start - m.start()] + "[REDACTED:url-key]" + m.group(0)[end - m.start():], m.end()
    return m.group(0), m.end()


def _url_credentials(m):
    password = m.group("urlpw")
    if "[REDACTED:" in m.group(0):
        return m.group(0), m.end()   # a URL already redacted ([REDACTED:url-key]@host): no user:password
    if re.fullmatch(r"\$\{?[A-Za-z_]\w*\}?|\{\{.*\}\}|<[^>]*>|\*+", password):
        return m.group(0), m.end()
    start, end = m.span("urlpw")
    return m.group(0)[: start - m.start()] + "[REDACTED:url-credentials]" + m.group(0)[end - m.start():], m.end()


# A cookie's attributes (Set-Cookie's) say where and how long it holds, never what it is.
_COOKIE_ATTRIBUTES = frozenset(("expires", "max-age", "domain", "path", "samesite", "priority", "secure",
                                "httponly", "partitioned", "version", "comment"))
_COOKIE_PAIR = _later(r"(?P<name>[^=;,\s\"'\\]{1,200})=(?P<value>[^;\s\"'\\]*)")


def _cookie(m):
    """Each cookie's value in a Cookie or Set-Cookie header redacted ([REDACTED:cookie]) when it
    is 12 or more characters holding a digit (a session id, a signed token), or shaped like a
    password; a short setting (theme=dark, lang=en) and Set-Cookie's attributes stay."""
    start = m.start("cookies")
    text, out, pos = m.group("cookies"), [], 0
    for pair in _COOKIE_PAIR.finditer(text):
        value = pair.group("value").strip('"')
        if pair.group("name").lower() in _COOKIE_ATTRIBUTES or not value or value.startswith("[REDACTED:"):
            continue
        if (len(value) >= 12 and any(c.isdigit() for c in value)) or _passwordish(value):
            out.append(text[pos:pair.start("value")] + "[REDACTED:cookie]")
            pos = pair.end("value")
    if not out:
        return m.group(0), m.end()
    return m.group(0)[: start - m.start()] + "".join(out) + text[pos:], m.end()


def _cli(m):
    for group in ("cli_a", "cli_b", "cli_c", "cli_d", "cli_e", "cli_f", "cli_g", "cli_h", "cli_i", "cli_j",
                  "cli_l", "cli_k", "cli_k2"):
        if m.group(group) is not None:
            value = m.group(group)
            if group in ("cli_k", "cli_k2"):
                user = m.group("cli_user") or m.group("cli_user2")
                if user.isdigit() and value.isdigit():
                    return m.group(0), m.end()   # uid:gid (docker run -u 1000:1000)
            if not _is_secret_value(value.strip("'\""), quoted=True) and not value.strip("'\"").isdigit():
                return m.group(0), m.end()
            start, end = m.span(group)
            return m.group(0)[: start - m.start()] + "[REDACTED:password]" + m.group(0)[end - m.start():], m.end()
    return m.group(0), m.end()


def _b64_pem(m):
    decoded = _b64decode(m.group(0)[:4000])
    if decoded is not None and b"PRIVATE KEY" in decoded:
        return "[REDACTED:private-key]", m.end()
    return m.group(0), m.end()


def _b64_credentials(m):
    whole = m.group(0)
    if m.lastgroup == "b64_creds" and len(whole) % 4:
        return whole, m.end()
    return ("[REDACTED:credentials]" if _decodes_to_credentials(whole) else whole), m.end()


# A piece's characters taken whole, as cut_token's are (no possessive `++` before Python 3.11).
_CUT_PIECE = _later(_CUT_BREAK + r"[ \t]*(?=(?P<piece>[A-Za-z0-9_\-]+))(?P=piece)" + _CUT_FOLLOW)
_CUT_HEAD = _later(r"(?:" + "|".join(prefix for prefix, _, _, _, _ in _CUT_FAMILIES) + r")")


def _cut_token(m):
    """A provider-prefixed token ending where its line or the text ends. Its rest on the next
    lines (a wrap: only the line break and the next line's indent between) is read with it while
    a token of a fixed length is still shorter than that, each piece being all token characters,
    ending where a token may, holding letters with digits or an inner capital (not a word or a
    number) or completing the fixed length, opening no token of its own, and the whole staying
    within _CUT_LONGEST; the whole is redacted when the provider's branch would redact it or it
    looks random. A token cut there, shorter than the provider's tokens are (their fixed length,
    or what the branch wants at least), is redacted when what is seen after its prefix is
    _CUT_VISIBLE characters or more that look random. Anything else is what the other branches
    make of it at this place (a whole token at its line's end: the provider's branch)."""
    text = m.string
    i = next(i for i in range(len(_CUT_FAMILIES)) if m.group(f"cutp{i}") is not None)
    _, chars, shortest, exact, kind = _CUT_FAMILIES[i]
    head_end = m.end(f"cutp{i}")
    body, end = text[head_end:m.end()], m.end()
    allowed = re.compile(chars + "+")
    while not exact or len(body) < exact:   # a token of a fixed length goes on only while shorter
        piece = _CUT_PIECE.match(text, end)
        if piece is None:
            break
        p = piece.group("piece")
        if (not allowed.fullmatch(p) or len(body) + len(p) > _CUT_LONGEST or _CUT_HEAD.match(p)
                or not (any(c.isdigit() for c in p) and any(c.isalpha() for c in p)
                        or re.search(r"[a-z][A-Z]", p) or exact and len(body) + len(p) == exact)):
            break
        body, end = body + p, piece.end("piece")
    if end > m.end():   # wrapped: the pieces read as one token
        label = _provider_label(text[m.start():head_end] + body)
        if label or _looks_random(body, _CUT_VISIBLE):
            return label or f"[REDACTED:{kind}]", end
        body, end = text[head_end:m.end()], m.end()
    other = _without_cut().match(text, m.start())
    if other is not None:
        replacement, other_end = _replace(other)
        if replacement != text[m.start():other_end]:
            return replacement, other_end
    if len(body) < (exact or shortest) and _looks_random(body, _CUT_VISIBLE):   # shorter than the provider's
        return f"[REDACTED:{kind}]", end
    return _replace(other) if other is not None else _skip(m)


def _provider_label(token: str):
    """[REDACTED:kind] when a provider's branch redacts the whole token, else None."""
    other = _without_cut().fullmatch(token)
    if other is None:
        return None
    replacement, end = _replace(other)
    return replacement if end == len(token) and replacement.startswith("[REDACTED:") and replacement.endswith("]") else None


def _without_cut() -> re.Pattern:
    """The pattern of every branch but cut_token's (what matches where a token is not cut)."""
    return _pattern_of(_NOT_CUT)


_HANDLERS = {"pem": _pem, "der": _der, "openssh_key": lambda m: ("[REDACTED:private-key]", m.end()),
             "aws_secret_key": _aws_secret, "azure_account_key": _azure_account, "lone_key": _lone_key,
             "vault_legacy": _random_only("vault-token"), "twilio_key": _twilio, "url_key": _url_key,
             "url_credentials": _url_credentials, "cli": _cli, "cookie": _cookie, "b64_pem": _b64_pem,
             "b64_json": _b64_credentials,
             "b64_creds": _b64_credentials, "cut_token": _cut_token}


def _words(m: re.Match):
    """A secret word: find the value it names in the words after it, redact that, keep the prose."""
    text, at = m.string, m.end()
    line_end = text.find("\n", at, at + _LOOK_AHEAD)
    rest = text[at: line_end if line_end >= 0 else at + _LOOK_AHEAD]
    if _PATH_SEPARATOR.match(rest):     # `associated_token::idempotent`: a path, no value; only a
        v = re.match(r"\w+", rest[2:]).group(0)    # random-looking one there is redacted
        return _value_redacted(m, at + 2, v) if _looks_random(v, 12) else _skip(m)
    connector = _CONNECTOR.match(rest)
    before = text[max(0, m.start() - 3):m.start()]
    flag = re.search(r"(?:^|[\s\"'=(\[])--?$", before) is not None and (m.start() >= 3 or before.startswith("-"))
    if not connector and (flag or re.match(r"\s+\\?[\"'`]", rest)):
        connector = re.match(r"\s+", rest)  # a command-line flag (--password X), or a quoted value (PASSWORD 'x')
    if not connector and before.endswith("<") and rest.startswith(">"):
        connector = re.match(">", rest)     # <password>x</password>
    if not connector:   # "la password è X": an English word in a sentence of another language
        foreign = _FOREIGN_CONNECTOR.match(rest)
        if foreign and foreign.group(0).strip():
            value = _VALUE.match(text, at + foreign.end())
            if value is not None and _passwordish(value.group("v").rstrip("\\"), bool(value.group("q"))):
                v = value.group("v").rstrip("\\")
                return _value_redacted(m, value.start("v"), v)
    # "password is X", "API_KEY=X", "token: X", "password for the VPN is X"
    if connector:
        value = _VALUE.match(text, at + connector.end())
        if value is None or text.startswith("-----BEGIN", value.start("v")):
            return text[m.start():at + connector.end()], at + connector.end()  # PEM: its own rule
        v = value.group("v").rstrip("\\")
        called = text.startswith("(", value.end("v"))
        pin = bool(_PASSWORD_WORD.search(m.group(0))) and v.isdigit() and len(v) >= 4
        quoted = bool(value.group("q"))
        # "tokens are classic", "a token instead of personal-account ones", "a private key that is
        # HKDF of ...": after a plural's "are", the preposition "of" or a relative clause's "that
        # is" (it describes, it assigns nothing) only a password-shaped value is one
        said = connector.group(0).lower().split()
        weak = said == ["are"] or said[-1:] == ["of"] or bool({"that", "which"} & set(said[:-1]))
        secret = _passwordish(v, quoted) if weak else _is_secret_value(v, quoted)
        if not quoted and not weak and not called and _PHRASE_WORD.search(m.group(0)):
            phrase = _PHRASE.match(text, value.start("v"))
            if phrase and not any(w.lower().strip("'’-") in _FUNCTION_WORDS for w in phrase.group(0).split()):
                return _value_redacted(m, value.start("v"), phrase.group(0))
        if not called and (pin or secret):
            return _value_redacted(m, value.start("v"), v)
        return _skip(m)
    # "the deploy token for staging qX8mPz...": a random-looking value within three words.
    words = list(islice(_WORD.finditer(rest), 3))
    for i, w in enumerate(words):
        value = w.group(0).strip("\"'`.,;:()[]{}<>")
        if value.lower() in _NAMING or _CONNECTOR.match(w.group(0)):
            break
        if value and _looks_random(value, 12) and not (
                _HEX.match(value) and i and words[i - 1].group(0).lower() in _NAMING):
            start = at + w.start() + w.group(0).index(value)
            end = _through_wrap(text, start, start + len(value))
            return text[m.start():start] + (_label_of(text[start:end]) if end > start + len(value)
                                            else "[REDACTED:secret]"), end
    return _skip(m)


def _foreign(m: re.Match):
    """A word for a password, secret or key in another language: its value, when it looks like a
    password (letters with digits or signs, a quoted word, a PIN after a word for password), is
    redacted; prose ("es incorrecta", "ist falsch", "неверный") is kept."""
    text, at = m.string, m.end()
    line_end = text.find("\n", at, at + _LOOK_AHEAD)
    rest = text[at: line_end if line_end >= 0 else at + _LOOK_AHEAD]
    connector = _FOREIGN_CONNECTOR.match(rest)
    if connector:
        value = _VALUE.match(text, at + connector.end())
        if value is not None:
            v, quoted = value.group("v").rstrip("\\"), bool(value.group("q"))
            pin = bool(_FOREIGN_PASSWORD.search(m.group(0))) and v.isdigit() and len(v) >= 4
            if pin or _passwordish(v, quoted):
                return _value_redacted(m, value.start("v"), v)
        return _skip(m)
    value = _VALUE.match(text, at)   # "пароль qwerty123", "密码 hunter2": a password right after the word
    if value is not None:
        v = value.group("v").rstrip("\\")
        if len(v) >= 6 and _passwordish(v, bool(value.group("q"))):
            return _value_redacted(m, value.start("v"), v)
    return _skip(m)


# The part of a name before its weak word that says the value is not a secret: a sort key, a
# compiler's first pass, a keyboard shortcut, a public key.
_PLAIN_QUALIFIER = frozenset("""
primary foreign sort partition range hash cache dict map lookup index unique composite row column group join
order shortcut hot public publishable site s3 object bucket idempotency dedup dedupe routing message i18n
translation locale label field config setting registry react first second third last next prev previous final
single multi render shadow depth compile lint build unit check tab enter escape esc return space arrow up down
left right modifier meta alt ctrl shift cmd command option no skip use require enable disable allow has is with
without
""".split())
_NAME_CONNECTOR = _later(r"""(?:\\?["'])?\]? *(?::=|=>|[:=：]) *""")
_WEAK_END = _later(r"(?i)" + _WEAK + r"$")
_NAME_PARTS = _later(r"[_\-.]|(?<=[a-z0-9])(?=[A-Z])")


_FLAG_DASHES = re.compile(r"(?:^|(?<=[\s\"'`=(\[]))--?\Z")


def _name(m: re.Match):
    """An assignment to a name whose last part is a weak secret word (DB_PASS=, encryptionKey:,
    "docker auth": ...): its value is redacted when the name and the value together say secret."""
    text, name = m.string, m.group(0)
    weak = _WEAK_END.search(name)
    before, word = name[:weak.start()], weak.group(0)
    # the weak word is a part of its own: after a separator, or a capital after a small letter
    if before and not (before[-1] in "_-." or word[0].isupper() and not before[-1].isupper()):
        return _skip(m)
    qualifier = _NAME_PARTS.split(before.rstrip("_-."))[-1].lower() if before else ""
    if qualifier in _PLAIN_QUALIFIER:
        return _skip(m)
    at = m.end()
    connector = _NAME_CONNECTOR.match(text, at)
    bare = connector is None and not before and word.lower() == "pass"
    if connector is None:   # only a flag's value follows without "=" or ":" (--db-pass X)
        # a flag's dashes open a word: in `/tools/git-ask-pass git push` (public21) the name ends a
        # program's path and the word after it is that program's argument
        if not _FLAG_DASHES.search(text, max(0, m.start() - 3), m.start()) and not bare:
            return _skip(m)
        connector = re.compile(" +").match(text, at)
    value = _VALUE.match(text, connector.end())
    if value is None:
        return _skip(m)
    v, quoted = value.group("v").rstrip("\\"), bool(value.group("q"))
    if bare:    # "the login pass Alley447$…", "user root pass Hfck…": never "pass the tests"
        ok = _looks_random(v, 12) or (_passwordish(v, quoted) and any(c.isdigit() for c in v)
                                      and any(c.isalpha() for c in v))
        return _value_redacted(m, value.start("v"), v) if ok else _skip(m)
    if _name_secret(word.lower(), qualifier, v, quoted):
        return _value_redacted(m, value.start("v"), v)
    if word.lower() == "webhook" and "://" in v:
        url = redact(v)   # a known webhook's shape first (hooks.slack.com), then random path parts
        url = _webhook_url(v) if url == v else url
        if url != v:
            return text[m.start():value.start("v")] + url, value.start("v") + len(v)
    return _skip(m)


def _name_secret(word: str, qualifier: str, v: str, quoted: bool) -> bool:
    """Whether v, assigned to a name whose last part is word (after qualifier), is a secret."""
    value = v.strip().rstrip(".,;:!?")
    if word == "auth":   # "auth": true, "auth": "basic" are settings; user:password, base64 of it, a key are not
        if _decodes_to_credentials(value):
            return True
        if _USER_PASS.fullmatch(value) and _is_secret_value(value.split(":", 1)[1], True):
            return True
        return _looks_random(value, 16)
    if word == "key":
        return _looks_random(value, 16) or bool(qualifier) and _passwordish(value, quoted)
    if word == "webhook":
        return "://" not in value and _passwordish(value, quoted)
    if not qualifier:    # a bare "pass:" or "creds:" may be a test runner's count or a setting
        return _passwordish(value, quoted)
    return _is_secret_value(value, quoted) or value.isdigit() and len(value) >= 4


def _webhook_url(url: str) -> str:
    """A webhook URL with its random path parts and query values redacted."""
    head, sep, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    if not slash:
        return url
    parts = re.split(r"([/?&=#])", path)
    changed = False
    for i, part in enumerate(parts):
        if len(part) >= 16 and (_looks_random(part, 16) or _HEX.match(part)):
            parts[i], changed = "[REDACTED:webhook]", True
    return head + sep + host + slash + "".join(parts) if changed else url


_HANDLERS.update(word=_words, foreign=_foreign, name=_name)


def _skip(m: re.Match):
    """A word or name that names no secret here: scanning goes on after its first run of letters
    and digits, so nothing inside the rest of it (a token after "token-") is passed over."""
    end = m.start() + 1
    while end < m.end() and m.string[end].isalnum():
        end += 1
    return m.string[m.start():end], end


def _value_redacted(m: re.Match, start: int, v: str):
    """(the match's text up to a value and the value's label, where scanning goes on) for a
    value v at start, read on over a wrap when it is a provider's token cut by a line break."""
    end = _through_wrap(m.string, start, start + len(v))
    return m.string[m.start():start] + _label_of(m.string[start:end]), end


def _through_wrap(text: str, start: int, end: int) -> int:
    """Where a value read from start to end (a value stops at a line break) ends: further when it
    is a provider's token whose rest is on the next line (cut_token reads it on)."""
    if end < len(text) and text[end] in " \t\r\n\\" and _CUT_HEAD.match(text, start):
        m = _pattern_of(_CUT_ONLY).match(text, start)
        if m is not None and m.lastgroup == "cut_token":
            return max(end, _cut_token(m)[1])
    return end


_CUT_ONLY = frozenset(("cut_token",))


def _label_of(value: str) -> str:
    """[REDACTED:kind] naming the provider when the whole value has a known shape, else :secret."""
    inner = redact(value)
    if inner.startswith("[REDACTED:") and inner.endswith("]") and inner.count("[") == 1:
        return inner
    return "[REDACTED:secret]"


_LOOK_AHEAD = 160  # how far after a secret word its value is looked for (one line at most)

# A secret word is redacted only with a value after it (`_words`), and "token", "password" or
# "secret" in prose most often has none ("the access token expires", "reset the password"):
# where no secret word of a text can have one, the word branch is not tried (the anchors' window
# search and `_words` at each, a tenth of a dense first ingest's redaction). Tried or not, the
# text comes out the same: a match of it that redacts nothing moves the scan past its first run
# of letters and digits, where no other branch can start (all start where a token starts), so it
# changes only what a branch matching at the same place would do, and those before it in
# _BRANCHES win there anyway; the ones after it are _WORD_SHADOWS, and with one of them possible
# the branch is tried. (A name at the same place, like "auth" in "auth key", redacts nothing
# without the ":" or "=" after it, or the "-" before it, that let the word branch be tried.)
_WORD_SHADOWS = frozenset(("foreign", "b64_pem", "b64_json", "der", "openssh_key", "azure_account_key",
                           "azure_client_secret", "aws_secret_key", "b64_creds", "lone_key"))
_JUST_WORD = frozenset(("word",))
# The needles every secret word holds (`_SECRET_WORD`: "client secret", "api key", "passwd").
_WORD_NEEDLES = ("token", "secret", "pass", "pwd", "key")
_WORD_RUNS = 10  # a value is named within 9 runs after a needle: a word's rest (its suffix,
# "access key" after "secret"), the connector's five words and itself (_FOREIGN_CONNECTOR's)
_WORD_REACH = 240   # at most a word's 42 characters past its needle and _LOOK_AHEAD
# What names a value after a secret word, in _words' own terms: a connector's sign (_CONNECTOR's,
# _FOREIGN_CONNECTOR's), a quote (a quoted value), ">" (<password>x), "- " (a dash as a connector),
# a particle in CJK text (any of its first characters); the words of a connector, by themselves;
# a run of 12 or more holding a digit (a random-looking value within three words).
_VALUE_SIGN = _later(r"[:=：＝>—–\"'`はがを是为為设設改는은이가]|-\s")
_VALUE_WORDS = frozenset("is was are equals set of becomes es era son est ist lautet war jest är je adalah é è это є".split())
_WORDS_IN = _later(r"\w+")
# "--password x", "-api-key x": a flag's dash before the word (and a connector of spaces after it)
_FLAG_BEFORE = _later(r"-[a-z0-9_\- ]{0,48}$")


def _value_may_follow(low: str) -> bool:
    """Whether some secret word in low (a text folded, _folded) may have a value after it that
    `_words` redacts: each place one of _WORD_NEEDLES is found is looked at (more than the words
    themselves; never fewer), for what every way `_words` finds a value needs."""
    for needle in _WORD_NEEDLES:
        at = low.find(needle)
        while at >= 0:
            end = at + len(needle)
            line_end = low.find("\n", end, end + _WORD_REACH)
            after = low[end:line_end if line_end >= 0 else end + _WORD_REACH]
            runs = after.split(None, _WORD_RUNS)
            if len(runs) > _WORD_RUNS:
                after = after[:len(after) - len(runs[_WORD_RUNS])]
                del runs[_WORD_RUNS]
            if _VALUE_SIGN.search(after) or not _VALUE_WORDS.isdisjoint(_WORDS_IN.findall(after)):
                return True
            if any(len(run) >= 12 and any(map(str.isdigit, run)) for run in runs):   # as _looks_random counts
                return True
            if "-" in low[max(0, at - 49):at] and _FLAG_BEFORE.search(low, max(0, at - 49), at):
                return True
            at = low.find(needle, end)
    return False


def _is_secret_value(value: str, quoted: bool) -> bool:
    value = value.strip().rstrip(".,;:!?")
    if len(value) < 3 or _PLACEHOLDER.match(value) or value.startswith("[REDACTED:"):
        return False
    if (value.startswith(("/", "./", "../", "~/")) or "://" in value) and not _b64_secret(value):
        return False  # a path or a URL (credentials inside a URL have their own rule)
    if not quoted and (value.lower() in _PROSE or _PROSE_SUFFIX.match(value)) and value.islower():
        return False
    if quoted and value.count(" ") >= 1 and all(w.lower() in _PROSE for w in value.split()):
        return False
    return True


def _passwordish(value: str, quoted: bool = False) -> bool:
    """A value shaped like a password or key: letters with digits or signs, inner capitals, or a
    quoted word; not prose, an identifier (created_at, user-id), a version, a path or a number."""
    value = value.strip().rstrip(".,;:!?")
    if len(value) < 4 or " " in value or not _is_secret_value(value, quoted):
        return False
    if re.fullmatch(r"[A-Za-z]+['’]s", value):
        return False  # a possessive (Vault's)
    if re.fullmatch(r"[a-z]+(?:[-_.][a-z0-9]+)+", value) or re.fullmatch(r"v?\d+(?:\.\d+)+[\w.\-]*", value):
        return False  # an identifier (created_at, user-id-2) or a version
    if quoted and value.isalpha():
        return value.lower() not in _PROSE
    letters = any(c.isalpha() for c in value)
    digits = any(c.isdigit() for c in value)
    signs = any(not c.isalnum() for c in value)
    return letters and (digits or signs or re.search(r"[a-z][A-Z]", value) is not None)


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
    if (value.startswith(("/", "./", "~/")) or value.count("/") >= 3) and not _b64_secret(value):
        return False  # a path
    if re.fullmatch(r"[a-z]+(?:[-_.][a-z0-9]+)+", value) or re.fullmatch(r"v?\d+(?:\.\d+)+[\w.\-]*", value):
        return False  # an identifier-like name (token-bucket-v2) or a version
    return _entropy(value) >= (4.2 if len(value) >= 40 else 3.0)


_B64_RUN = _later(r"[A-Za-z0-9+/]{20,}={0,2}|[A-Za-z0-9_\-]{20,}={0,2}")


def _b64_secret(value: str) -> bool:
    """A run of base64 (15 bytes or more, unpadded or not) that its slashes, a leading one among
    them, do not make a path: a base64 key has a slash in one of 64 characters (three or more in
    one of six 64-byte keys, a leading one in one of 64), and "secret: /cJIGRz4…" and "the token
    for staging …/4/t2fk9O/9nU…" were kept whole. It holds a "+" or a long part between slashes
    (16 or more) mixing capitals and small letters as random text does (each a fifth of it or
    more, and capitals a quarter without a digit), which no folder's name or identifier does
    ("/home/runner/work/SomeRepositoryName2024"). (A key with no digit and no connector before it,
    "secret YJEVuuNjlZnlLemzjfbFuA", one 16-byte key in 40, stays: the gate reads folded text,
    and a run of letters alone is not tried, `_value_may_follow`.)"""
    if not _B64_RUN.fullmatch(value):
        return False
    if "+" in value:
        return True
    part = max(value.split("/"), key=len)
    n, upper, lower = len(part), sum(c.isupper() for c in part), sum(c.islower() for c in part)
    digits = n - upper - lower
    return n >= 16 and 5 * upper >= n and 5 * lower >= n and (digits > 0 or 4 * upper >= n) and _entropy(part) >= 3.5


def _entropy(value: str) -> float:
    n = len(value)
    counts = {}
    for c in value:
        counts[c] = counts.get(c, 0) + 1
    return -sum(k / n * math.log2(k / n) for k in counts.values())


def _b64decode(value: str):
    """The bytes of standard or URL-safe base64 (padding optional), or None."""
    value = value.strip().rstrip("=")
    value += "=" * (-len(value) % 4)
    try:
        return base64.b64decode(value.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None


_USER_PASS = _later(r"[^\s:/@]{1,64}:(?!//)\S{3,}")


def _decodes_to_credentials(value: str, depth: int = 0) -> bool:
    """Whether base64 text decodes to credentials: user:password, or text holding a secret
    (a JSON object with a password, a docker config's auth)."""
    raw = _b64decode(value)
    if not raw or len(raw) < 5:
        return False
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if not decoded.isprintable() and not all(c.isprintable() or c in "\n\r\t" for c in decoded):
        return False
    if _USER_PASS.fullmatch(decoded.strip()):
        user, password = decoded.strip().split(":", 1)
        if not (user.isdigit() and password.isdigit()) and _is_secret_value(password, True):
            return True
    return depth == 0 and redact(decoded) != decoded


def _body_end(body: str) -> int:
    """Where a base64 body's lines stop having a body's widths: every line as wide as the first,
    then one narrower last line unless it is shaped like a key of its own (40 or 88 wide)."""
    lines = list(re.finditer(r"[A-Za-z0-9+/]+={0,2}", body.replace("\\n", "\n\n")))
    if len(lines) <= 1:
        return len(body)
    width = len(lines[0].group(0))
    end = lines[0].end()
    for line in lines[1:]:
        n = len(line.group(0))
        if n == width:
            end = line.end()
            continue
        if n < width and n not in (40, 88):
            end = line.end()
        break
    return end


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


# --------------------------------------------------------------------------------------
# Redacting before a cut: a text is redacted whole before it is shortened, and a huge one only
# where the cut keeps it. MARGIN is wider than any secret a rule redacts as one piece and than
# any rule reads around it: an 8192-bit RSA key in PEM is 6.4 KB, a PEM half at most 120
# lines of 80 (with Read's line numbers about 11 KB), a secret word reads 160 characters after
# it and a value of 400. So what a window's redaction makes more than MARGIN from its edges
# is what the whole text's redaction makes there, and a secret across a cut is either whole
# inside the window or not in the part kept.
MARGIN = 16_384


def redacted_head(text: str, n: int) -> str:
    """redact(text)[:n], redacting about n + MARGIN characters of text (more only where
    redaction shortened them): the start of a multi-megabyte output costs what a page does."""
    text = text if isinstance(text, str) else str(text or "")
    width = n + MARGIN
    while width < len(text):
        window = text[:width]
        cut = width - MARGIN
        out, pos = [], 0
        for start, end, replacement in _spans(window, frozenset(_possible(window))):
            if start >= cut:
                break
            out += (window[pos:start], replacement)
            pos = end
        if pos < cut:
            out.append(window[pos:cut])
        got = "".join(out)
        if len(got) >= n:
            return got[:n]
        width *= 2
    return redact(text)[:n]


def redacted_tail(text: str, n: int) -> str:
    """redact(text)[-n:] (the last n characters), redacting about n + MARGIN characters of text."""
    text = text if isinstance(text, str) else str(text or "")
    if n <= 0:
        return ""
    width = n + MARGIN
    while width < len(text):
        window = text[len(text) - width:]
        cut = MARGIN
        out, pos = [], cut
        for start, end, replacement in _spans(window, frozenset(_possible(window))):
            if end <= cut:
                continue
            if start >= pos:
                out.append(window[pos:start])
            out.append(replacement)   # a redaction across the cut is kept whole
            pos = end
        out.append(window[pos:])
        got = "".join(out)
        if len(got) >= n:
            return got[-n:]
        width *= 2
    return redact(text)[-n:]


def secret_safe_clip(text, limit: int) -> str:
    """shorten.clip(text, limit), except that where it cuts, the text is redacted first (whole,
    or a huge one in the stretch kept plus MARGIN): no part of a secret is kept across the cut.
    A text it does not cut is returned as shorten.clip returns it, unredacted: the store's gate
    redacts every field it stores whole (redacting here too doubled a first ingest's redaction)."""
    text = str(text or "")
    if len(text) <= limit:
        return shorten.clip(text, limit)   # folding only shortens: no cut
    if len(text) > 4 * limit + MARGIN and limit > 0:
        head = redacted_head(text, 4 * limit)
        folded = " ".join(head.split())
        if len(folded) > limit:
            return folded[: limit - 1].rstrip() + "…"
    if len(text) <= REDACTED_KEPT_CHARS or limit <= 0:
        return shorten.clip(redacted(text), limit)   # a short text's redaction is remembered
    whole = _REDACTED_LONG.get(text)     # redacted whole already (redacted()): the same cut
    return shorten.clip(whole if whole is not None else _redacted_as_far_as_kept(text, limit), limit)


def _redacted_as_far_as_kept(text: str, limit: int) -> str:
    """A text that shorten.clip(_, limit) cuts as it cuts redact(text): redacted from its start up
    to the first secret that begins after more than limit characters (whitespace folded, as clip
    counts them) of the redacted text; the rest is left as it is, since clip drops it. (The folded
    redacted text is then longer than limit whatever follows, and its first limit characters are
    already made: a secret found later changes neither.)"""
    branches = _possible(text)
    if not branches:
        return text
    out, pos, length = [], 0, 0
    for start, end, replacement in _each_span(text, frozenset(branches)):
        out.append(text[pos:start])
        length += start - pos
        pos = start
        if length > limit and len(" ".join("".join(out).split())) > limit:   # folding only shortens
            break
        out.append(replacement)
        length += len(replacement)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def secret_safe_clip_block(text: str, limit: int) -> str:
    """shorten.clip_block(text, limit), redacted first where it cuts (as secret_safe_clip)."""
    text = text or ""
    if len(text) <= limit:
        return shorten.clip_block(text, limit)   # stripping only shortens: no cut
    n = limit
    while limit > 0 and len(text) > n + MARGIN:
        head = redacted_head(text, n).lstrip()
        if head[limit:].strip():   # the stripped whole is longer than limit: cut as clip_block cuts
            return head[: limit - 1].rstrip() + "…"
        n *= 4
    return shorten.clip_block(redacted(text), limit)


# --------------------------------------------------------------------------------------
# A correction whose lasting part is a secret teaches nothing that may be kept.

_CLAUSE_END = _later(r"[.;!?\n]+(?:\s|$)|,\s+(?:and\s+)?(?=(?:when|before|after|if|unless|until|while|because|"
                     r"since|so|then|otherwise)\b)|\s+(?=(?:when|before|after|if|unless|until|while|because|since|"
                     r"otherwise)\b)", re.I)
_OPENERS = _later(r"^(?:no+|nope|wrong|stop|wait|actually|hey|ok(?:ay)?|please|sorry|hmm+|ugh)\b[\s,.!:;—-]*", re.I)


def mostly_secret(text: str) -> bool:
    """Whether the instruction in text is a secret: once redacted, its first clause (after
    "No," and the like; up to when/before/if/a full stop) holds a redacted value. "No, always
    export DB_PASS=hunter2 before migrating" is; "run the tests first; the token is in 1Password"
    is not (no secret), nor "use pytest -q, not unittest"."""
    redacted_text = redact(str(text or ""))
    if "[REDACTED:" not in redacted_text:
        return False
    rest = redacted_text.strip()
    while True:
        opener = _OPENERS.match(rest)
        if not opener or not opener.group(0):
            break
        rest = rest[opener.end():]
    for clause in _CLAUSE_END.split(rest):
        if len(re.findall(r"\w+", clause)) == 0:
            continue
        return "[REDACTED:" in clause
    return False


# --------------------------------------------------------------------------------------
# Storing episodes: every text field redacted, a transcript's texts through one gate pass.

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
    """The facts redacted by text, as JSON: where the gate found nothing in any of their strings
    (_Gated.keeps), the JSON of the facts as they are."""
    if isinstance(text, _Gated) and text.keeps(facts):
        return _FACTS_JSON.encode(facts)
    return _FACTS_JSON.encode(redact_obj(facts, text))


# json.dumps(facts, ensure_ascii=False, sort_keys=True), without a new encoder each time
_FACTS_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True)


def redactor_for(texts: list):
    """A function that redacts each of these texts (or a string inside one) as redact() does,
    each text's gate answered by one search over them all (_possible_each: the episodes of one
    transcript, whose texts then need no gate search of their own); any other string is
    redacted()."""
    return _Gated(_possible_each(texts))


class _Gated:
    """redact() with each text's gate answered beforehand ({text: _possible(text)}): a text the
    gate stops is kept, any other redacted with the branches it let through (what redact does),
    a long one remembered as redacted() remembers it; a string it was not given is redacted()."""
    __name__ = "_gated"

    def __init__(self, gates: dict):
        self.gates = gates

    def __call__(self, text):
        branches = self.gates.get(text) if isinstance(text, str) else None
        if branches is None:
            return redacted(text)
        if not branches:
            return text
        if len(text) > REDACTED_KEPT_CHARS:
            found = _REDACTED_LONG.get(text)
            if found is None:
                found = _joined(text, _spans(text, branches))
                _REDACTED_LONG.put(text, found)
            return found
        return _redacted_short_with(text, branches)

    def keeps(self, value) -> bool:
        """Whether every string inside a JSON-like value is one the gate stopped (redact keeps it)."""
        strings = []
        strings_in(value, strings)
        gates = self.gates
        return all(gates.get(s) == _NOTHING for s in strings)


_NOTHING = frozenset()


@lru_cache(maxsize=8192)
def _redacted_short_with(text: str, branches: frozenset) -> str:
    """redact(text) of a short text, whose gate let these branches through (short texts repeat)."""
    return _joined(text, _spans(text, branches))


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
    repeat across the episodes of a session and across sessions; a longer one is remembered
    while it is among the last texts seen (_Kept: a tool's output cut for several episodes)."""
    if not isinstance(text, str):
        return redact(text)
    if len(text) > REDACTED_KEPT_CHARS:
        found = _REDACTED_LONG.get(text)
        if found is None:
            found = redact(text)
            _REDACTED_LONG.put(text, found)
        return found
    return _redacted_short(text)


@lru_cache(maxsize=REDACTED_KEPT)
def _redacted_short(text: str) -> str:
    return redact(text)


class _Kept:
    """A memo of a pure function of a text, bounded by the characters of the texts it holds
    (keys and values): emptied when they pass `chars`, and a text longer than `longest` is
    not kept. What it gives back is what the function gives for that text: the same result,
    without the work."""

    def __init__(self, chars: int, longest: int):
        self.chars, self.longest, self.held, self.kept = chars, longest, 0, {}

    def get(self, text: str):
        return self.kept.get(text)

    def put(self, text: str, value) -> None:
        size = len(text) + (len(value) if isinstance(value, str) and value is not text else 0)
        if len(text) > self.longest:
            return
        if self.held + size > self.chars:
            self.kept.clear()
            self.held = 0
        self.kept[text] = value
        self.held += size


# The gate's answer and long texts' redaction, per text: about 1 M characters held each (the
# texts are mostly alive anyway while their session is read), none of a text over 256 K. What
# repeats, repeats within a session: 1 M keeps all of it on the dev and public corpora, as 4 M did.
KEPT_CHARS = 1_000_000
KEPT_LONGEST = 262_144
_GATES = _Kept(KEPT_CHARS, KEPT_LONGEST)
_REDACTED_LONG = _Kept(KEPT_CHARS, KEPT_LONGEST)
