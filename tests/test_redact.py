"""Redaction as a table: secrets that must go, and look-alikes that must stay byte for byte.

Every value below is fake or a throwaway key made for this table (tests/data/pem_samples.json:
512-bit RSA, P-256, Ed25519 and OpenSSH keys generated once with openssl/ssh-keygen).
"""
import base64
import json
import subprocess
import sys
import unittest
from pathlib import Path

from openmemory import redact as redact_module
from openmemory.redact import mostly_secret, redact, redact_obj
from tests.fixtures import Transcript, project_folder
from tests.helpers import TempHome

PEM = json.loads((Path(__file__).parent / "data" / "pem_samples.json").read_text())


def body(name: str) -> str:
    """The base64 lines of a PEM sample, without its armour."""
    return "\n".join(line for line in PEM[name].splitlines() if not line.startswith("-----"))


AWS_SECRET = "PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA+"
AZURE_ACCOUNT_KEY = "2O76UMFxFkM+R5Kjp1vRt/1fjORS+6ilI8ihN5KXSc7Tvo+hBKqFYY+kv5ZJr3J1TWDtkwtDDb/xHKas1VOqg6=="

# (text, the part that must not survive)
SECRETS = [
    # secrets said in words
    ("the staging database password is hunter2-Staging", "hunter2-Staging"),
    ("the api key that is sk-live-abc123XYZ987 must rotate", "sk-live-abc123XYZ987"),
    ("The password is hunter", "hunter"),
    ("password: correcthorse", "correcthorse"),
    ("my passphrase is 'correct horse battery staple'", "correct horse battery staple"),
    ("the passphrase = Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("our secret is opensesame42", "opensesame42"),
    ("the api key is 53X83RZJzzzzgEOzdmen", "53X83RZJzzzzgEOzdmen"),
    ("API key: CkhvMdgaKjIg8xNbe3nNyjOq", "CkhvMdgaKjIg8xNbe3nNyjOq"),
    ("the deploy token is 9wMxEhh2FDEEtfjgVvVqE1SkHbn88Hxj.", "9wMxEhh2FDEEtfjgVvVqE1SkHbn88Hxj"),
    ("the admin password was Winter2025! until Monday", "Winter2025!"),
    ("Password for the VPN is s3cr3t-vpn", "s3cr3t-vpn"),
    ("the secret key equals zq81Lm0XvB77", "zq81Lm0XvB77"),
    ("the heroku api key is 0f4d3c1e-2b9a-4c8d-9e7f-6a5b4c3d2e1f", "0f4d3c1e-2b9a-4c8d-9e7f-6a5b4c3d2e1f"),
    # high-entropy values next to secret words, no "is" or "="
    ("here is the token qX8mPz2LwR4tK9vN3bY7 for CI", "qX8mPz2LwR4tK9vN3bY7"),
    ("use secret Zx8fQ2nR7pL4sW9k when deploying", "Zx8fQ2nR7pL4sW9k"),
    ("my github password hunter2Staging! please", "hunter2Staging!"),
    ("Authorization: token abcdefghijklmnopqrstuvwxyz0123", "abcdefghijklmnopqrstuvwxyz0123"),
    # assignments in code, shells, config and JSON
    ("export DB_PASSWORD=p4ssw0rd-prod", "p4ssw0rd-prod"),
    ("PGPASSWORD=fr0gger psql -h db", "fr0gger"),
    ('{"password": "hunter2hunter2"}', "hunter2hunter2"),
    ("client_secret: 'Kd92mxA1-secretvalue'", "Kd92mxA1-secretvalue"),
    ("apiToken = \"tok_88af0012bbcd\"", "tok_88af0012bbcd"),
    ("mysql -u root --password s3cretR00t db", "s3cretR00t"),
    ("aws_secret_access_key = " + AWS_SECRET, AWS_SECRET),
    ("private_key_id: a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"),
    ("DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=" + AZURE_ACCOUNT_KEY, AZURE_ACCOUNT_KEY[:30]),
    # provider token shapes
    ("key sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFF", "AAAABBBBCCCCDDDD"),
    ("OPENAI sk-proj-abcdefghijklmnopqrstuvwxyz12", "abcdefghijklmnopqrstuvwxyz12"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("gh auth ghp_16C7e42F292c6912E7710c838347Ae178B4a", "16C7e42F292c6912E7710c838347Ae178B4a"),
    ("gitlab glpat-xxYYzz0123456789abcdEF", "xxYYzz0123456789abcdEF"),
    ("slack xoxb-1234567890-abcdefghijkl", "1234567890-abcdefghijkl"),
    ("AWS id AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("maps key AIzaSyA1234567890abcdefghijklmnopqrstuv", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    ("oauth client GOCSPX-1a2B3c4D5e6F7g8H9i0JkLmNoP", "GOCSPX-1a2B3c4D5e6F7g8H9i0JkLmNoP"),
    ("sendgrid SG.abcdefghijklmnopqrstuv.ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopq", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    ("curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123'", "abcdefghijklmnopqrstuvwxyz0123"),
    # an Authorization header under another scheme or none: GitHub's classic token is 40 hex
    ("curl -H 'Authorization: token 9f8e7d6c5b4a39281706f5e4d3c2b1a0abcdef12' https://api.github.com/user",
     "9f8e7d6c5b4a39281706f5e4d3c2b1a0abcdef12"),
    ('{"headers": {"authorization": "Zq8mP2vL9xK4wR7tY1abcQWE", "accept": "*/*"}}', "Zq8mP2vL9xK4wR7tY1abcQWE"),
    ("Proxy-Authorization: ApiKey 5up3rS3cretV4lue99", "5up3rS3cretV4lue99"),
    # a session's cookie is a login: each value of a Cookie or Set-Cookie header judged
    ('curl -H "Cookie: theme=dark; connect.sid=s%3AZq8mP2vL9xK4wR7tY1abcQWE.abcdefghijklmnop" http://localhost:3000/api',
     "Zq8mP2vL9xK4wR7tY1abcQWE"),
    ("< Set-Cookie: _shop_session=9f8e7d6c5b4a39281706f5e4d3c2b1a0; Path=/; HttpOnly", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ('{"headers": {"set-cookie": "remember_token=1|Zq8mP2vL9xK4wR7tY1abc; path=/; secure"}}', "Zq8mP2vL9xK4wR7tY1abc"),
    ("psql postgres://admin:Sup3rS3cret@db.internal:5432/app", "Sup3rS3cret"),
    ("https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sig=Xy9%2Bk3LmNoPqRsTuVwXyZ0123456789abcd%3D",
     "Xy9%2Bk3LmNoPqRsTuVwXyZ0123456789abcd"),
    # cloud secret keys on their own
    ("the second line of the csv was " + AWS_SECRET, AWS_SECRET),
    ("a deploy token of Zx8fQ2nR7pL4sW9kQ for staging", "Zx8fQ2nR7pL4sW9kQ"),
    ("failed: key " + AWS_SECRET + ". While working on it", AWS_SECRET),
    (AZURE_ACCOUNT_KEY, AZURE_ACCOUNT_KEY[:30]),
    ("azure app SI68Q~dMlHUvTC.QCyEZDz~TddJ8HyS5SUkCn", "dMlHUvTC.QCyEZDz~TddJ8HyS5SUkCn"),
    # private keys: armoured, bare bodies, JSON-escaped
    (PEM["rsa1"], body("rsa1").splitlines()[1]),
    ("-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0abcdEFGH\n-----END PGP PRIVATE KEY BLOCK-----", "lQOYBF0abcdEFGH"),
    ("pasted: " + body("rsa1"), body("rsa1").splitlines()[3]),
    ("pasted: " + body("p8"), body("p8").splitlines()[2]),
    (body("ec"), body("ec").splitlines()[1]),
    ("ed25519 " + body("ed"), body("ed")[10:]),
    (body("enc"), body("enc").splitlines()[4]),
    ("key file:\n" + body("openssh"), body("openssh").splitlines()[2]),
    ('{"private_key": "' + PEM["p8"].replace("\n", "\\n") + '"}', body("p8").splitlines()[1]),
    (body("rsa1").replace("\n", ""), body("rsa1").splitlines()[2]),
]

# (text, how it is told apart from a secret): each must come back unchanged.
LOOKALIKES = [
    ("fixed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
     "a 40-character git hash is lowercase hex; an AWS secret key on its own needs both cases"),
    ("git show 9FCEB02D0AE598E95DC970B74767F19372D61AF8",
     "upper-case hex has no lower case: not a base64 key"),
    ("the token check failed at commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
     "a hex run after a naming word (commit, sha, id) names an object"),
    ("request id 123e4567-e89b-12d3-a456-426614174000 failed",
     "a UUID not next to a secret word is an identifier"),
    ("session 0f4d3c1e-2b9a-4c8d-9e7f-6a5b4c3d2e1f ended", "a UUID after an ordinary word"),
    ("prefix the push: `GIT_ASKPASS=/codeocean-tools/git-ask-pass git push`",
     "a program's path that ends in 'pass': the word after it is the program's argument (public21)"),
    ("see /usr/local/lib/python3.12/site-packages/openmemory/redact.py",
     "a path: slashes and dots break the 40-character run"),
    ("src/components/UserProfileSettings2Page/x",
     "a 40-character path without dots: three slashes make it a path"),
    ("![logo](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
     "a base64 image: longer than any key shape and not an ASN.1 private key"),
    ("fixture = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'",
     "a base64 GIF in a test fixture"),
    ('"integrity": "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg=="',
     "an SRI digest in a lockfile: the sha512- prefix joins it to a longer run"),
    ("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7855b852",
     "a sha256 digest: 64 lowercase hex, no key shape"),
    ("image@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7855b852",
     "a docker digest"),
    ("h1:Aq8HhMhsJb3XjRqlSDv3Ad1RbB4Tb1Rk4bZuvoQg+fA=", "a go.sum hash: 44 characters, not 40"),
    ("The password is wrong", "a prose word after 'is' describes the password"),
    ("the token is expired, log in again", "prose: expired"),
    ("the API key is invalid", "prose: invalid"),
    ("the secret is stored in the vault", "prose: stored"),
    ("password: required", "prose: required"),
    ("the password is being reset by IT", "prose: being"),
    ("max_tokens = 4096", "a number is a setting, not a secret"),
    ("tokens: 12345", "a number"),
    ("password = ${DB_PASSWORD}", "a reference to an environment variable"),
    ("API_KEY=$ANTHROPIC_API_KEY", "a reference to an environment variable"),
    ("api_key = os.environ['OPENAI_API_KEY']", "code that reads the key"),
    ("SECRET_KEY = settings.SECRET_KEY", "an attribute reference in code"),
    ("token = get_token()", "a call in code"),
    ("password: <your password here>", "a placeholder in angle brackets"),
    ("password=********", "a masked value"),
    ("token_file: /etc/openmemory/token", "a path"),
    ("the tokenizer = AutoTokenizer", "tokenizer is not the word token"),
    ("run detokenize on the output", "detokenize is not the word token"),
    ("update secrets.yml in .github/workflows", "a file name next to a secret word, not random"),
    ("the token-bucket-rate-limiter-v2 module", "an identifier: lowercase words joined by dashes"),
    ("bump the api key library to v2.31.0-beta", "a version number"),
    ("the token count 4096 is too high", "digits only, and a naming word"),
    ("password reset for user 1234", "prose and a number"),
    ("-----BEGIN CERTIFICATE-----\n" + body("cert") + "\n-----END CERTIFICATE-----",
     "a certificate is public by design"),
    (body("cert"), "a bare certificate body: its DER starts with a nested SEQUENCE, not a version INTEGER"),
    (PEM["pub"], "a public key is public by design"),
    ("npm test -- --coverage --reporter=verbose", "flags without a secret word"),
    ("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBQ9fVgOiKb5HGQpZuwyXXf8k3r0ZB7cRvK8gRqfT4Yb me@host",
     "an SSH public key line"),
    ("Exit code 1\nError: Cannot find module 'react-dom/client'", "an ordinary error"),
    ("passing 40 of 40 tests; secret scanning found nothing", "prose around secret words"),
    ("What is the password policy here?", "a question about passwords"),
    ("https://github.com/anthropics/claude-code/blob/main/README.md", "a URL without credentials"),
    ("SomeVeryLongCamelCaseIdentifierNameHere1", "a 40-character identifier: a word-like, low-spread name"),
    ("abcdefghijklmnopqrstuvwxyzabcdefghijklmn", "40 letters, no digit, one case"),
    ('"integrity": "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk="', "a sha1 SRI digest: 28 characters, no key shape"),
    ("reverted 9fceb02 and 1a2b3c4", "short commit hashes"),
    ("npm install @types/node@20.11.5 typescript@5.4.2", "package versions"),
    ("FROM python:3.12-slim-bookworm AS build", "a Docker image tag"),
    ("data:image/jpeg;base64,/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD",
     "a base64 JPEG in a fixture: one long run, and it starts /9j/, not an ASN.1 SEQUENCE"),
    ("arn:aws:iam::123456789012:role/DeployRole", "an AWS ARN: an account number and a name"),
    ("aws s3 cp app.tar.gz s3://acme-releases-2024/releases/v1.2.3/app.tar.gz", "a bucket path"),
    ('<input type="password" name="pw" autocomplete="current-password">', "an HTML password field"),
    ("def test_password_reset_sends_email_with_token_link(self):", "a test name holding secret words"),
    ("GET /api/v1/users/550e8400-e29b-41d4-a716-446655440000/profile 200", "a UUID in a URL path"),
    ("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904", "a git tree hash: lowercase hex"),
]


def b64(s): return base64.b64encode(s.encode()).decode()
oss = PEM["openssh"].splitlines()
half = len(oss)//2
SSH_SECOND_HALF = "\n".join(oss[half:])
rsa = PEM["rsa1"].splitlines()
RSA_SECOND_HALF_READ = "\n".join(f"{i+10:>6}→{l}" for i, l in enumerate(rsa[len(rsa)//2:]))
# Issue 27: the twenty forms that were kept, and their kin.
SECRETS += [
    # issue 27's twenty forms
    ("export DB_PASS=hunter2Xq9", "hunter2Xq9"),
    ("ENCRYPTION_KEY=9f8e7d6c5b4a39281706f5e4d3c2b1a0", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("SENTRY_DSN=https://4f9c2d7e1b8a4c6d9e0f3a2b5c7d8e9f@o123456.ingest.sentry.io/4506", "4f9c2d7e1b8a4c6d9e0f3a2b5c7d8e9f"),
    ("dsn: https://a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6@sentry.example.com/12", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"),
    ("curl -s --user 'api:key-3ax6xnjp29jd6fds4gc373sgvjxteol0' https://api.mailgun.net/v3", "key-3ax6xnjp29jd6fds4gc373sgvjxteol0"),
    ("MAILGUN_API_KEY is key-3ax6xnjp29jd6fds4gc373sgvjxteol0", "3ax6xnjp29jd6fds4gc373sgvjxteol0"),
    ("STRIPE_WEBHOOK=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLSgm", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLSgm"),
    ("stripe listen said: Your webhook signing secret is whsec_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P", "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P"),
    ("mysql -u root -phunter2Xq9 app_db", "hunter2Xq9"),
    ("mysqldump -h db.internal -u admin -p'S3cr3t!Pass' shop > dump.sql", "S3cr3t!Pass"),
    ("curl -u deploy:Pa55w0rd-Prod https://ci.example.com/api", "Pa55w0rd-Prod"),
    ("curl --user 'alice:correct-Horse-9' https://api.example.com", "correct-Horse-9"),
    ("https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/sendMessage", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"),
    ("TELEGRAM_TOKEN=5555555555:AAE-x9fGh2Jk3Lm4Np5Qr6St7Uv8Wx9Yz0Ab", "AAE-x9fGh2Jk3Lm4Np5Qr6St7Uv8Wx9Yz0Ab"),
    ("vault login hvs.CAESIJlU9cQ0Y7mUqBvN3ZxD8bRtE2kHwPaLsFgJ", "CAESIJlU9cQ0Y7mUqBvN3ZxD8bRtE2kHwPaLsFgJ"),
    ("VAULT_TOKEN=hvs.CAESIB3x8F2qLmNpRs7TuVwXyZa1Bc4De5Fg6Hi", "CAESIB3x8F2qLmNpRs7TuVwXyZa1Bc4De5Fg6Hi"),
    ("twine upload -p pypi-AgEIcHlwaS5vcmcCJGE0YjM2ZDk1LWU3ZTAtNDc4Ny1hZWRjLTk1NjU5YjE0YzFhZQ", "AgEIcHlwaS5vcmcCJGE0YjM2ZDk1LWU3ZTAtNDc4Ny1hZWRj"),
    ("la contraseña de la base de datos es Cl4ve-Secreta", "Cl4ve-Secreta"),
    ("Das Passwort lautet Geheim2024!", "Geheim2024!"),
    ("das Kennwort ist Sommer-7391", "Sommer-7391"),
    ("пароль от сервера: Qwerty-2024x", "Qwerty-2024x"),
    ("пароль qwerty1234abc", "qwerty1234abc"),
    ("パスワードはhunter2Xq9です", "hunter2Xq9"),
    ("本番のパスワード: Tanuki-8832", "Tanuki-8832"),
    ("docker auth: " + b64("deploy:Tr0ub4dor&3-prod"), b64("deploy:Tr0ub4dor&3-prod")),
    ("Authorization header was " + b64("admin:s3cr3t-Admin!"), b64("admin:s3cr3t-Admin!")),
    (SSH_SECOND_HALF, oss[half]),
    (RSA_SECOND_HALF_READ, rsa[len(rsa)//2]),
    # kin: names that say secret/pass/key/token/dsn/webhook in any case
    ("db_pass: 'Qz81-prod-pass'", "Qz81-prod-pass"),
    ("dbPass = \"m00nL1ght\"", "m00nL1ght"),
    ('"db-pw": "Xk29sLq0"', "Xk29sLq0"),
    ("--db-pass Xk29sLq0v", "Xk29sLq0v"),
    ("encryptionKey: 'Zx8fQ2nR7pL4sW9kQ1'", "Zx8fQ2nR7pL4sW9kQ1"),
    ("SIGNING_KEY=Hq3v9Lx2Rt8Wm4Zp", "Hq3v9Lx2Rt8Wm4Zp"),
    ("ADMIN_PW=Blu3-M00n-77", "Blu3-M00n-77"),
    ("SMTP_AUTH=" + b64("mailer:W1nter-2025"), b64("mailer:W1nter-2025")),
    ("SLACK_WEBHOOK=https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/abcdefghij1234567890ABCD", "abcdefghij1234567890ABCD"),
    ("REDIS_PASSWORD=r3d1s-P4ss", "r3d1s-P4ss"),
    ("Jwt_Secret=Kd92mxA1qwe", "Kd92mxA1qwe"),
    ("session-secret: 8ahd72Hs9Lq", "8ahd72Hs9Lq"),
    ("GITHUB_TOKEN=ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("MASTER_KEY: 'Aa1Bb2Cc3Dd4Ee5F'", "Aa1Bb2Cc3Dd4Ee5F"),
    ("LICENSE_KEY=XK92-PL3M-Q8ZR-7TWV", "XK92-PL3M-Q8ZR-7TWV"),
    # passwords as command arguments
    ("sshpass -p 'Sup3rS3cret' ssh deploy@host", "Sup3rS3cret"),
    ("redis-cli -h cache -a r3d1sPassw0rd ping", "r3d1sPassw0rd"),
    ("docker login -u bot -p dckrPw-88812 registry.example.com", "dckrPw-88812"),
    ("openssl rsa -in k.pem -passin pass:Ch4ng3Me-Now", "Ch4ng3Me-Now"),
    ("CREATE USER 'app'@'%' IDENTIFIED BY 'Appl3-Pie-99';", "Appl3-Pie-99"),
    ("mongosh -u admin -p M0ng0-Adm1n --authenticationDatabase admin", "M0ng0-Adm1n"),
    ("7z x backup.7z -pArch1ve-Key", "Arch1ve-Key"),
    ("sqlcmd -S db -U sa -P Str0ng!Passw0rd", "Str0ng!Passw0rd"),
    ("keytool -list -keystore ks.jks -storepass K3yst0re-Pw", "K3yst0re-Pw"),
    ("ldapsearch -x -D cn=admin -w Ld4p-Adm1n -b dc=x", "Ld4p-Adm1n"),
    # DSNs and URLs with credentials
    ("DATABASE_URL=postgres://app:Pg-S3cret-9@db.internal:5432/app", "Pg-S3cret-9"),
    ("mongodb+srv://root:M0ng0Pw%40x@cluster0.mongodb.net/test", "M0ng0Pw%40x"),
    ("redis://:R3disOnly-Pw@cache:6379/0", "R3disOnly-Pw"),
    ("amqp://guest:Rabb1t-Pw-2@mq:5672/", "Rabb1t-Pw-2"),
    ("git clone https://oauth2:glpat-xY9zA8bC7dE6fG5hI4jK@gitlab.com/acme/app.git", "xY9zA8bC7dE6fG5hI4jK"),
    # known token prefixes
    ("xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKlMnOpQrStUvWx"),
    ("sk_live_51HqLyjWDarjtT1zdp7dcXGzEAB", "51HqLyjWDarjtT1zdp7dcXGzEAB"),
    ("rk_test_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"),
    ("npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"),
    ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("SG.aBcDeFgHiJkLmNoPqRsTuV.wXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01", "wXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ01"),
    ("dop_v1_" + "a1b2c3d4" * 8, "a1b2c3d4" * 8),
    ("glpat-xY9zA8bC7dE6fG5hI4jK", "xY9zA8bC7dE6fG5hI4jK"),
    ("AGE-SECRET-KEY-1" + "QZ8X7W6V5U4T3S2R1P0N9M8L7K6J5H4G3F2E1D0C9B8A7Z6Y5X4W3V", "QZ8X7W6V5U4T3S2R1P0N9M8L7K6J5H4G3F2E1D0C9B8A7Z6Y5X4W3V"),
    ("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", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"),
    ("shpat_0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"),
    ("dapi0123456789abcdef0123456789abcdef", "dapi0123456789abcdef0123456789abcdef"),
    ("sk-proj-a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk", "dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
    # passwords stated in words, other languages
    ("le mot de passe est Soleil-2024", "Soleil-2024"),
    ("a senha é Brasil@2024", "Brasil@2024"),
    ("la password è Roma-1234x", "Roma-1234x"),
    ("het wachtwoord is Tulp-8891", "Tulp-8891"),
    ("hasło: Krak0w-2024", "Krak0w-2024"),
    ("密码是hunter2Xq9", "hunter2Xq9"),
    ("비밀번호는 Seoul-2024!", "Seoul-2024!"),
    ("Passwort: 'Geheim'", "Geheim"),
    ("contraseña: 48213977", "48213977"),
    # secrets said in English words
    ("the wifi password is Blue-Moon-77", "Blue-Moon-77"),
    ("No, always export DB_PASS=hunter2Xq9 and STRIPE_WEBHOOK=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLSgm before migrating", "hunter2Xq9"),
    ("No, always export DB_PASS=hunter2Xq9 and STRIPE_WEBHOOK=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLSgm before migrating", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLSgm"),
    ("the root pwd = Tr33house!", "Tr33house!"),
    ("the signing secret for prod is qX8mPz2LwR4tK9vN", "qX8mPz2LwR4tK9vN"),
    # a provider's token wrapped by a terminal or a tool: both parts go; or cut where the text ends
    ("key sk-proj-Zx9Yw8Vu7Ts6\nRq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7 done", "Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7"),
    ("key sk-proj-Zx9Yw8Vu7Ts6\nRq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7 done", "Zx9Yw8Vu7Ts6"),
    ("GITHUB_TOKEN=ghp_Zx9Yw8Vu7Ts6Rq5Po4\nNm3Lk2Ji1Hg0Fe9Dc8\n", "Nm3Lk2Ji1Hg0Fe9Dc8"),
    ("gh auth login --with-token ghp_Zx9Yw8Vu7Ts6Rq5Po4  \n    Nm3Lk2Ji1Hg0Fe9Dc8 ok", "Nm3Lk2Ji1Hg0Fe9Dc8"),
    ('{"env": "OPENAI_API_KEY=sk-proj-Zx9Yw8Vu7Ts6\\nRq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7"}', "Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7"),
    ("sk-ant-api03-Qw7Er5Ty3Ui1Op9As7Df5Gh3Jk1Lz8Xc6Vb4Nm2\nQa1Ws2Ed3Rf4Tg5Yh6Uj7Ik8Ol9Pz0Xq1Wc2Ev3Rb4\nTn5My6\n",
     "Tn5My6"),
    ("xoxb-2047856193-Kd8Lq2Vx\n9Pw3Rt7Zm1Yc4Hs6 posted", "9Pw3Rt7Zm1Yc4Hs6"),
    ("glpat-Zx9Yw8Vu\nRq5Po4Nm3Lk2", "Rq5Po4Nm3Lk2"),
    ("AKIA7QX2\nZL9M4B6KPD rest", "ZL9M4B6KPD"),
    ("I pasted sk-proj-Zx9Yw8Vu7Ts6", "Zx9Yw8Vu7Ts6"),
    ("the output stopped at ghp_Zx9Yw8Vu7Ts6Rq5Po4\n\nand went on", "Zx9Yw8Vu7Ts6Rq5Po4"),
    ("aws key AKIA7QX2ZL9M4B6KP", "7QX2ZL9M4B6KP"),
    ("sk-proj-Zx9Yw8Vu7Ts6… (truncated)", "Zx9Yw8Vu7Ts6"),
    ("github_pat_11AZX9QYA0Zx9Yw8Vu7Ts6_Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7\nQw7Er5Ty3Ui1Op9As7Df5Gh3Jk1Lz8Xc6Vb4Nm2Qa1W\n",
     "Qw7Er5Ty3Ui1Op9As7Df5Gh3"),
    ('{"args": "--token hf_Zx9Yw8Vu7Ts6Rq5Po4\\r\\nNm3Lk2Ji1Hg0Fe9Dc8Ba7 --verbose"}', "Nm3Lk2Ji1Hg0Fe9Dc8Ba7"),
    ('curl -H "Authorization: Bearer ghp_Zx9Yw8Vu7Ts6Rq5Po4\n  Nm3Lk2Ji1Hg0Fe9Dc8" https://api.github.com/user',
     "Nm3Lk2Ji1Hg0Fe9Dc8"),
]
LOOKALIKES += [
    # a provider's prefix at a line's or the text's end, with prose or an identifier: kept
    ("tokens start with ghp_\nand are 40 characters long", "a prefix named at a line's end"),
    ("GitHub classic tokens look like ghp_\nabc123 in the docs", "a prefix and a short word on the next line"),
    ("keys begin with sk-\nProject keys with sk-proj-", "prefixes named alone, one at the text's end"),
    ("pip install sk-learn\n", "a package name after the prefix's letters"),
    ("git checkout -b sk-fix-login-bug-1234", "a branch name at the text's end"),
    ("ghp_placeholder_token_here", "a placeholder at the text's end"),
    ("AKIA\nis how AWS access key ids begin", "an AWS prefix alone"),
    ("AKIATESTKEY\n", "an AWS-like name cut short, no digits"),
    ("set it to sk-proj-\nmyProject later", "a prefix, then a name on the next line"),
    ("mv sk-Learn2Model\n", "an identifier shorter than a cut token"),
    ("echo $GITHUB_TOKEN | cut -c1-4  # ghp_\n2 files changed", "a prefix then a count"),
]
LOOKALIKES += [
    ("the password is wrong", "prose after a secret word"),
    ("la contraseña es incorrecta", "Spanish prose: the password is wrong"),
    ("Das Passwort ist falsch", "German prose"),
    ("пароль неверный", "Russian prose"),
    ("パスワードが違います", "Japanese prose"),
    ("mysql -u root -p app_db", "mysql asking for the password at a prompt"),
    ("docker run -u 1000:1000 alpine id", "a uid:gid"),
    ("curl -u \"$USER:$PASS\" https://api.example.com", "credentials from the environment"),
    ("export DB_PASS=${DB_PASS}", "a reference to a variable"),
    ("DB_PASS=$(vault kv get -field=pw secret/db)", "a command substitution"),
    ("ENCRYPTION_KEY=", "an empty assignment"),
    ("primary_key = True", "a database column's setting"),
    ("sort_key: created_at", "a sort key's name"),
    ("cache_key = f\"user:{uid}\"", "a cache key built in code"),
    ("PUBLIC_KEY_PATH=/etc/ssl/public.pem", "a path"),
    ("api_key = os.environ['API_KEY']", "a key read from the environment"),
    ("password = getpass.getpass()", "a password asked for"),
    ("token = request.headers.get('Authorization')", "an attribute"),
    ("tokens_used: 1532", "a count of tokens"),
    ("max_tokens=4096", "a model setting"),
    ("Ran 12 tests: 10 pass, 2 fail", "test runner counts"),
    ("pass: 12 fail: 0", "a count after pass"),
    ("git commit -m 'fix token refresh'", "a commit message about tokens"),
    ("src/auth/password_reset.py:42: in test_reset", "a source path"),
    ("commit 9fceb02d0ae598e95dc970b74767f19372d61af8", "a commit hash"),
    ("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "a digest"),
    ("integrity sha512-Q9zX2Lk8...==", "a truncated lockfile digest"),
    ("550e8400-e29b-41d4-a716-446655440000", "a UUID"),
    ("https://sentry.io/organizations/acme/issues/4506/", "a Sentry page"),
    ("https://github.com/acme/app/pull/42", "a pull request URL"),
    ("postgres://localhost:5432/app", "a database URL without credentials"),
    ("postgres://app:${PGPASSWORD}@db:5432/app", "a URL whose password is a variable"),
    ("ssh deploy@10.0.0.5 -p 2222", "ssh's port option"),
    ("pip install -U requests", "pip's upgrade flag"),
    ("tar -xzf key-value-store.tar.gz", "a file named key-"),
    ("key-value pairs are stored in a dict", "prose about key-value"),
    ("the webhook fires on push", "prose about a webhook"),
    ("webhook_url: https://example.com/hooks/deploy", "a webhook URL of a plain path"),
    ("dsn = settings.SENTRY_DSN", "a setting referenced"),
    ("Use the DSN from the Sentry project settings", "prose about a DSN"),
    ("whsec_ is the prefix of Stripe webhook secrets", "a prefix named alone"),
    ("hvs. tokens are Vault's service tokens", "a Vault prefix named alone"),
    ("pypi-AgE is how a PyPI token starts", "a PyPI prefix named alone"),
    ("bot token goes in TELEGRAM_TOKEN", "prose naming a variable"),
    ("use a GitHub App token instead of personal-account tokens", "a kind of token after a preposition"),
    ("a private key that is HKDF of the recipient's public key", "a relative clause describing a key"),
    ("an API key instead of oauth", "a way to sign in after a preposition"),
    ("Error: 401 Unauthorized (invalid api key)", "an error about a key"),
    ("SECRET_KEY must not be empty", "an error naming a setting"),
    ("ValueError: password too short", "an error about a password"),
    ("keyboard shortcut: ctrl+k", "a shortcut"),
    ("hotkey: cmd+shift+p", "a hotkey"),
    ("eslint --fix src/", "a linter"),
    ("image/png;base64,iVBORw0KGgo=", "a tiny base64 image"),
    ("echo aGVsbG8gd29ybGQ= | base64 -d", "base64 of prose"),
    ("Content-Length: 1024", "a header"),
    ("npm install --save-dev typescript@5.4.5", "a package version"),
    ("python3 -m pytest -k test_token_expiry", "a test selection"),
    ("export NODE_ENV=production", "an ordinary variable"),
    ("the key insight is caching", "prose about a key"),
    ("Passwords must be 12 characters long", "a policy"),
    ("Mot de passe oublié ?", "French: forgot password"),
    ("Passwort vergessen?", "German: forgot password"),
    ("SELECT id, password_hash FROM users", "SQL naming a column"),
    ("ALTER USER app IDENTIFIED BY :pw", "SQL with a bind variable"),
    ("openssl genrsa -out key.pem 4096", "a key generation command"),
    ("ssh-keygen -t ed25519 -C me@example.com", "a key generation command with an email"),
    ("auth: true", "an auth setting"),
    ("auth: basic", "an auth scheme"),
    ("x-api-key header missing", "a header's name"),
    ("Bearer realm=\"api\"", "a WWW-Authenticate header"),
    ("Authorization: required for every request since 2024", "prose after an Authorization header's name"),
    ("Cookie: theme=dark; lang=en; tz=UTC", "a cookie's settings"),
    ('document.cookie = "consent=yes; path=/; max-age=31536000"', "a consent cookie set with its attributes"),
    ("curl -H \"Authorization: token $GITHUB_TOKEN\" https://api.github.com/user", "a header naming a variable"),
    ("sk-learn is not the package name; use scikit-learn", "a sk- word"),
    ("ghp_ tokens are classic personal access tokens", "a prefix named alone"),
    ("AKIAIOSFODNN7 is short", "an AWS-like word too short"),
    ("v1.2.3-rc.1+build.5", "a version"),
    ("line 40: AbstractSingletonProxyFactoryBeanImpl", "a long identifier"),
    ("Deleted branch feature/token-refresh (was 3f2a1b9).", "a branch name"),
    ("the token bucket limiter allows 10 requests per second", "prose"),
    ("kubectl get secret db-creds -o yaml", "naming a secret"),
    ("chmod 600 ~/.ssh/id_ed25519", "a key's path"),
    ("password_hash = bcrypt.hashpw(pw, salt)", "code hashing a password"),
]

# The red team's gaps (red34): a bare "pw", a passphrase of words, a Google OAuth refresh token, a
# base64 key that opens with a slash or holds three: each with what it must not take.
REFRESH = "1//0gLxYzAbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ"
SLASHED_KEY = "/cJIGRz4DlFp8iOQh3f2UEoxCeFJx2KPZmYreSDPSkdmbTZiW7+twKtilKu4F72GuD/gJtHOnbznw1KC8WBtPw"
GAPS = [
    ("pw: hunter2xyz", "pw: [REDACTED:secret]"),
    ("the vpn pw: Tr0ub4dor&3", "the vpn pw: [REDACTED:secret]"),
    ("PW=hunter2xyz make deploy", "PW=[REDACTED:secret] make deploy"),
    ("pwd=hunter2", "pwd=[REDACTED:secret]"),
    ("passphrase: correct horse battery staple", "passphrase: [REDACTED:secret]"),
    ("the passphrase is correct horse battery staple, then run ssh-add",
     "the passphrase is [REDACTED:secret], then run ssh-add"),
    ("PASSPHRASE=Correct Horse Battery Staple", "PASSPHRASE=[REDACTED:secret]"),
    (REFRESH, "[REDACTED:google-refresh-token]"),
    ('{"refresh_token": "%s"}' % REFRESH[:60], '{"refresh_token": "[REDACTED:google-refresh-token]"}'),
    ("secret: " + SLASHED_KEY, "secret: [REDACTED:secret]"),
    ("the token for staging Rayd2aYewmgD5ZjLIkhAP3x/4/t2fk9O/9nUNh52bevG1AZ25pWiIQ5VtP/phOQ8LuRdDSlx2",
     "the token for staging [REDACTED:secret]"),
    ("passphrase /EIYyAbEf9h1JKCelI4QCw", "passphrase [REDACTED:secret]"),
]
NEAR_GAPS = [
    ("pw: see the wiki", "a pointer to where it is"),
    ("pw: TBD", "not set yet"),
    ("pw: ${DB_PW}", "a variable"),
    ("--- PASS: TestCheckpointWrite (0.00s)", "Go's test runner: a bare pass is no name"),
    ("key: name", "a YAML map's key"),
    ("no-pw: hunter2x", "a name whose qualifier says it is no password"),
    ("PWD=/home/dev/shop", "the shell's working folder"),
    ("passphrase: see the wiki", "a pointer to where it is"),
    ("password: see below", "a pointer to where it is"),
    ("the passphrase is stored in 1Password", "where it is kept"),
    ("passphrase: not needed for this key", "prose after a connector"),
    ("Enter passphrase for key '/root/.ssh/id_rsa':", "ssh's prompt"),
    ("passphrase: required when the key is encrypted", "prose after a connector"),
    ("see file:1//0 in the notes", "a refresh token's prefix alone"),
    ("token: /home/runner/work/SomeRepositoryName2024", "a path after a secret word"),
    ("secret: /Users/JohnDoe/Projects/MyCoolApp2", "a path after a secret word"),
]
SECRETS += [("pw: hunter2xyz", "hunter2xyz"), ("PW=hunter2xyz make deploy", "hunter2xyz"),
            ("passphrase: correct horse battery staple", "horse battery"), (REFRESH, REFRESH[20:])]
LOOKALIKES += NEAR_GAPS[:7]


class TheRedTeamsGaps(unittest.TestCase):
    """Secrets the table missed (a bare `pw:`, a passphrase of words, a Google refresh token, a
    base64 key with slashes), and what looks like them and must stay."""

    def test_each_is_redacted_and_its_prose_kept(self):
        for text, want in GAPS:
            with self.subTest(text=text[:60]):
                self.assertEqual(redact(text), want)

    def test_each_near_miss_stays(self):
        for text, why in NEAR_GAPS:
            with self.subTest(why=why, text=text):
                self.assertEqual(redact(text), text)


class AKeyAloneOnItsLine(unittest.TestCase):
    # public15 (session 49): asked for its API key, a person answered with the key alone, 64 letters
    # and digits; no word named it, and it was stored whole in the passage of that exchange and shown
    # to the judge. (Made up here, of the same shape.)
    KEY = "qRw7TzLp0aXbN3mVc8UeYk2GsHd5Jf9WiOt4Ey1ZlKuP6oBnQa3RsD7vTf0MhXc2"

    def test_a_random_key_alone_on_its_line_is_redacted(self):
        for text, want in [(self.KEY, "[REDACTED:secret]"),
                           (f"yes\n{self.KEY}\nproceed", "yes\n[REDACTED:secret]\nproceed"),
                           (f"{self.KEY}  \r\nthanks", "[REDACTED:secret]  \r\nthanks")]:
            self.assertEqual(redact(text), want)

    def test_what_looks_like_it_and_is_no_key_stays(self):
        block = ("MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n"
                 "RTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD\n"
                 "VQQDExlCYWx0aW1vcmUgQ3liZXJUcnVzdCBSb290MB4XDTAwMDUxMjE4NDYwMFoX")
        for text in ["da39a3ee5e6b4b0d3255bfef95601890afd80709",          # a commit: one case
                     "testShouldReturnTheUserWhenTheCacheIsEmptyAndRetried2",  # a name: a word's spread
                     "0123456789012345678901234567890123456789012345",      # digits only
                     block]:                                               # a base64 block's lines
            self.assertEqual(redact(text), text, text[:40])


class PassAloneAsAName(unittest.TestCase):
    # public15 (session 49): "Hetzner.com console login: <mail> pass: <password> you'll need to help
    # change the IPv6 …", typed by the person, was stored whole and shown to the judge in the context
    # of 30 other messages: "pass" alone was no name. A test runner's "PASS: TestFoo" stays.
    def test_a_value_given_to_pass_is_redacted(self):
        for text, want in [("console login: jo@example.com pass: Alley447$Alley447$ you'll need to help",
                            "console login: jo@example.com pass: [REDACTED:secret] you'll need to help"),
                           ("Pass=S3cr3t!xy", "Pass=[REDACTED:secret]"),
                           ("I have the login pass Alley447$Alley447$", "I have the login pass [REDACTED:secret]"),
                           ("user root pass HfckhiqAmCv9Tx9crMKp", "user root pass [REDACTED:secret]")]:
            self.assertEqual(redact(text), want)

    def test_a_test_runners_pass_and_words_ending_in_pass_stay(self):
        for text in ["--- PASS: TestFoo (0.00s)", "PASS: TestCart", "tests pass: all 12 of them", "pass: 12",
                     "bypass: x1y2z3", "compass: north", "make the tests pass 100%", "pass the tests",
                     "pass --help to it", "Pass v2 to the client", "all tests pass 12/12"]:
            self.assertEqual(redact(text), text)


class GitHubActionsSecretsInherit(unittest.TestCase):
    # newuser44, a week of public5 sessions: the orpheus agent's "now calls it via `secrets: inherit`"
    # was recalled as "now calls it via `secrets: [REDACTED:secret]`", and the workflow it wrote lost the
    # line that says how its secrets reach the reusable workflow: no secret in it, only the keyword.
    def test_secrets_inherit_is_kept_and_a_value_there_is_not(self):
        said = ("- [latest.yml](.github/workflows/latest.yml) now calls it via `secrets: inherit` after "
                "`publish-latest`.")
        self.assertEqual(redact(said), said)
        written = ("  publish-cask-head:\n    name: publish head cask\n    needs: [publish-latest]\n"
                   "    uses: ./.github/workflows/publish-cask-head.yml\n    secrets: inherit")
        self.assertEqual(redact(written), written)
        self.assertEqual(redact("secrets: hunter2Xq9zL"), "secrets: [REDACTED:secret]")


class APathInsideASecretWord(unittest.TestCase):
    # newuser45, a week of public7 sessions: light-protocol's session on the `associated_token::idempotent`
    # flag of its #[light_account] macro was stored with every mention as `associated_token::[REDACTED:secret]`
    # (157 redactions in the database, this the most), the plan approved "Add `associated_token::[REDACTED:
    # secret]` flag": "::" read as "token: X", though it names a thing inside the word, as in `token::Mint`.
    def test_a_rust_path_after_a_secret_word_is_kept_and_a_value_there_is_not(self):
        for said in ("#[light_account(init, associated_token::idempotent = ata_owner, associated_token::mint = ata_mint)]",
                     "Implement the following plan: # Add `associated_token::idempotent` flag to `#[light_account]`",
                     "use light_token::token::Mint;"):
            with self.subTest(said=said):
                self.assertEqual(redact(said), said)
        self.assertEqual(redact("token: s3cr3tV4lue9"), "token: [REDACTED:secret]")
        self.assertEqual(redact("token := \"s3cr3tV4lue9\""), 'token := "[REDACTED:secret]"')
        self.assertNotIn("qX8mPz7LkW2nR4tY9vB3", redact("token::qX8mPz7LkW2nR4tY9vB3"))
        self.assertNotIn("hunter2x9", redact("password::=hunter2x9"))
        self.assertEqual(redact("password:: hunter2x9"), "password:: [REDACTED:secret]")


class RedactTable(unittest.TestCase):
    def test_at_least_a_hundred_of_each(self):
        self.assertGreaterEqual(len(SECRETS), 100)
        self.assertGreaterEqual(len(LOOKALIKES), 100)

    def test_every_secret_is_redacted(self):
        for text, secret in SECRETS:
            with self.subTest(text=text[:60]):
                out = redact(text)
                self.assertNotIn(secret, out)
                self.assertIn("[REDACTED:", out)

    def test_every_lookalike_stays(self):
        for text, why in LOOKALIKES:
            with self.subTest(why=why):
                self.assertEqual(redact(text), text)

    def test_prose_around_a_secret_is_kept(self):
        self.assertEqual(redact("the staging database password is hunter2-Staging, ask Sam"),
                         "the staging database password is [REDACTED:secret], ask Sam")
        self.assertEqual(redact("export DB_PASSWORD=p4ssw0rd-prod && make"),
                         "export DB_PASSWORD=[REDACTED:secret] && make")

    def test_two_secrets_on_one_line(self):
        out = redact("password is hunter2x and the token is 9wMxEhh2FDEEtfjgVvVqE1SkHbn88Hxj")
        self.assertNotIn("hunter2x", out)
        self.assertNotIn("9wMxEhh2", out)

    def test_a_wrapped_token_is_one_token_and_the_lines_around_it_stay(self):
        # a terminal wrapped the key at 20 columns: both halves go, the next line is kept
        self.assertEqual(redact("$ cat .env\nKEY=sk-proj-Zx9Yw8Vu7Ts6\nRq5Po4Nm3Lk2Ji1Hg0Fe9Dc8Ba7\nexport X=1"),
                         "$ cat .env\nKEY=[REDACTED:openai-key]\nexport X=1")
        self.assertEqual(redact("ghp_Zx9Yw8Vu7Ts6Rq5Po4\nNm3Lk2Ji1Hg0Fe9Dc8\n2 files changed"),
                         "[REDACTED:github-token]\n2 files changed")
        # a GitHub token whole at its line's end (36 characters) does not go on to the next line
        self.assertEqual(redact("ghp_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8\nab12cd34 deployed"),
                         "[REDACTED:github-token]\nab12cd34 deployed")
        # cut where the text ends, shorter than the provider's pattern: redacted when random enough
        self.assertEqual(redact("pasted ghp_Zx9Yw8Vu7Ts6"), "pasted [REDACTED:github-token]")
        self.assertEqual(redact("pasted ghp_Zx9Yw8Vu7Ts"), "pasted ghp_Zx9Yw8Vu7Ts")   # 11 seen: kept

    def test_redaction_is_idempotent(self):
        for text, _ in SECRETS:
            once = redact(text)
            self.assertEqual(redact(once), once)

    def test_redact_obj_walks_json(self):
        self.assertEqual(redact_obj({"a": ["the password is hunter22"], "n": 3}),
                         {"a": ["the password is [REDACTED:secret]"], "n": 3})


class TheGate(unittest.TestCase):
    """redact() reads text through a fast gate: it may let look-alikes through to the pattern,
    never a text a branch of the pattern would match, and the pattern it then runs has the
    branches let through, so redaction is the same as without the gate."""

    @staticmethod
    def variants(text: str) -> list:
        # case changes, and the letters outside ASCII that IGNORECASE matches to ASCII ones
        return [text, text.upper(), text.swapcase(), "x " + text + " y", text.replace("s", "ſ"),
                text.replace("i", "ı"), text.replace("k", "\u212a"), text.replace("I", "İ"),
                text.replace("S", "ſ").replace("K", "\u212a"), "café — " + text]

    def test_every_text_the_pattern_matches_passes_the_gate(self):
        matched = 0
        for text, _ in SECRETS + LOOKALIKES:
            for v in self.variants(text):
                with self.subTest(text=v[:60]):
                    for m in redact_module.whole_pattern().finditer(v):  # each branch that matches is let through
                        matched += 1
                        self.assertIn(m.lastgroup, redact_module._possible(v))
                    self.assertEqual(redact(v), redact_module._redact(v))
        self.assertGreater(matched, 400)

    def test_random_text_built_from_the_pieces_of_secrets_is_redacted_as_without_the_gate(self):
        import random
        rng = random.Random(12)
        pieces = ["password", "PASSWD", "Token", "tokens_used", "api key", "API_KEY", "secret", "pwd", "=", ": ",
                  " is ", "-", "_", "--", " ", "\n", "\\n", "://", "@", "user", ":", "sk-", "sk-ant-", "ghp_",
                  "AKIA", "aiza", "ya29.", "GOCSPX-", "npm_", "hf_", "SG.", "dop_v1_", "shpat_", "1Q~", "eyJ",
                  ".eyJ", "?sig=", "&", "Bearer ", "basic ", "Authorization: ", "authorization\":\"", "Cookie: ", "set-cookie=", "; ", "b3BlbnNzaC1rZXktdjE", "-----BEGIN RSA PRIVATE KEY-----",
                  "-----END RSA PRIVATE KEY-----", "MII", "xoxb-", "glpat-", "rk_live_", "ſ", "ı", "İ", "\u212a",
                  "café", "https://", "hooks.slack.com/services/", "T0/B1/x", "9fceb02d", "Zx9Qm",
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcd_", "Shared_Access_Key", "shared access key", "client-secret",
                  "private key", "Account_Key", "secret_access_key", "passphrase", "--token "]
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="
        for _ in range(3000):
            parts = [rng.choice(pieces) if rng.random() < 0.5 else
                     "".join(rng.choice(alphabet) for _ in range(rng.choice((3, 12, 20, 36, 40, 44, 88))))
                     for _ in range(rng.randint(1, 8))]
            text = "".join(parts)
            with self.subTest(text=text[:80]):
                self.assertEqual(redact(text), redact_module._redact(text))

    def test_the_texts_of_one_transcript_are_redacted_as_each_alone(self):
        # prepare() asks the gate once for all the texts of a transcript's episodes (redactor_for), then
        # redacts each with what it let through
        import random
        rng = random.Random(3)
        pieces = [t for t, _ in SECRETS + LOOKALIKES] + ["the token page", "src/password.py", "tokens_used: 3",
                                                         "my password is hunter22 " * 20, "ok " * 150]
        kinds = set()
        for _ in range(1500):
            texts = [" ".join(rng.choice(pieces) for _ in range(rng.randint(0, 3))) for _ in range(rng.randint(1, 6))]
            redact_module._GATES.kept.clear()   # each text's gate answered by the one search, not remembered
            text = redact_module.redactor_for(texts)
            for t in texts:
                with self.subTest(text=t[:80]):
                    self.assertEqual(text.gates[t], frozenset(redact_module._gate(t)[0]))
                    self.assertEqual(text(t), redact(t))
                kinds.add(self._way(text.gates[t]))
        self.assertEqual(kinds, {"kept", "words only", "other"})  # each way was taken

    @staticmethod
    def _way(branches) -> str:
        return "kept" if not branches else "words only" if branches <= redact_module._ANCHORED else "other"

    def test_a_needle_across_two_texts_is_in_neither(self):
        # the texts are searched joined by line breaks: a needle found lies inside one of them
        texts = ["nothing here", "my pass", "word is hunter22x", "the tok", "en is Zx8fQ2nR7pL4sW9kQ", "sk_li",
                 "ve_" + "a" * 30, "the token is Zx8fQ2nR7pL4sW9kQ", "plain words", "sk_live_" + "b" * 30]
        redact_module._GATES.kept.clear()
        text = redact_module.redactor_for(texts)
        for t in texts:
            with self.subTest(text=t):
                self.assertEqual(text.gates[t], frozenset(redact_module._gate(t)[0]))
                self.assertEqual(text(t), redact(t))
        self.assertEqual(text("my password is hunter22x"), redact("my password is hunter22x"))   # not given: redacted
        self.assertNotIn("hunter22x", text("my password is hunter22x"))

    def test_the_needles_found_are_the_longest_at_each_place_one_starts(self):
        # the gate searches with one pattern per opening character: together they find, at every
        # place a needle starts, the longest one starting there, in one text and in texts joined
        import random
        rng = random.Random(8)
        needles = [n for n, _, _ in redact_module._NEEDLE_SPECS]
        pieces = needles + [n[:-1] for n in needles] + ["a", "s", "-", " ", "k", "x", "é", "\n"]
        for _ in range(2000):
            low = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
            expected = set()
            for p in range(len(low)):
                here = [n for n in needles if low.startswith(n, p)]
                if here:
                    expected.add(max(here, key=len))
            with self.subTest(text=low):
                self.assertEqual(redact_module._found(low), expected)
        texts = ["sk-" + "a" * 20, "the token is here", "plain", "ghp_x and passwd", ""]
        redact_module._GATES.kept.clear()
        gates = redact_module._possible_each(texts)
        for t in texts:
            self.assertEqual(gates[t], frozenset(redact_module._judged(t, redact_module._found(t))[0]))

    def test_the_facts_of_a_transcript_are_redacted_as_alone(self):
        # facts pass the gate with the rest of the transcript's texts; facts none of whose strings
        # the gate let through are stored as they are
        import random
        rng = random.Random(5)
        pieces = [t for t, _ in SECRETS + LOOKALIKES] + ["the token page", "my password is hunter22", "ok",
                                                         "a KEY: Zx8fQ2nR7pL4sW9kQ", "naïve \"quoted\" \\ path\n"]
        ways = {}
        for _ in range(1500):
            facts = {"said": " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 2))), "count": 2,
                     "commands": [rng.choice(pieces) for _ in range(rng.randint(0, 2))], "nested": {"x": rng.choice(pieces)}}
            ep = {"key": "k", "kind": "correction", "title": rng.choice(pieces), "gist": "g", "at": "t", "facts": facts}
            texts = [ep["title"], "g", ""]
            redact_module.strings_in(facts, texts)
            text = redact_module.redactor_for(texts)
            ways["kept" if text.keeps(facts) else "redacted"] = 1
            with self.subTest(facts=facts):
                self.assertEqual(redact_module.clean_episode(ep, text), redact_module.clean_episode(ep))
        self.assertEqual(set(ways), {"kept", "redacted"})  # each way was taken

    def test_the_anchors_are_found_wherever_the_gate_finds_a_needle_of_an_anchored_branch(self):
        # the anchors' pattern is written apart from the gate's needles (grouped by first letter, for
        # speed): wherever a needle of a secret word, name, command or foreign word (or the pattern the
        # gate reads for it) starts, an anchor starts too, so no window is missed
        import re
        gate = [p or re.compile(re.escape(n)) for n, p, b in redact_module._NEEDLES if set(b) & redact_module._ANCHORED]
        texts = [v for t, _ in SECRETS + LOOKALIKES for v in TheGate.variants(t)] + [
            "keystore -storepass x", "tool --user bob:pw -u alice:pw", "mots de passe: x", "palavra-passe é x",
            "API-Key: x", "licence key is x", "the auth key = x", "creds: x", "webhook p", "dsn=x", "pw  :x"]
        found = 0
        for text in texts:
            low = redact_module._folded(text)
            for pattern in gate:
                for m in pattern.finditer(low):
                    found += 1
                    with self.subTest(text=text[:60], needle=pattern.pattern[:30]):
                        self.assertIsNotNone(redact_module._ANCHOR_RE.match(low, m.start()))
        self.assertGreater(found, 300)

    def test_a_cut_is_what_cutting_the_whole_text_redacted_makes(self):
        # secret_safe_clip redacts a long text only up to the first secret past what the cut keeps:
        # whatever it leaves, the cut is the one of the whole text redacted, secrets across it included
        import random
        from openmemory import shorten
        rng = random.Random(7)
        pieces = [t for t, _ in SECRETS + LOOKALIKES] + ["the token page", "my password is hunter22", "ok",
                                                         " " * 40, "\n\n", "word " * 30, "café"]
        lazy = 0
        for _ in range(1500):
            text = " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
            limit = rng.choice((1, 20, 60, 140, 160, 300, 600))
            lazy += len(text) > max(limit, redact_module.REDACTED_KEPT_CHARS)
            with self.subTest(text=text[:80], limit=limit):
                whole = redact(text) if len(text) > limit else text   # a text not cut is redacted by the store
                self.assertEqual(redact_module.secret_safe_clip(text, limit), shorten.clip(whole, limit))
        self.assertGreater(lazy, 500)

    def test_a_text_seen_before_is_redacted_and_cut_as_the_first_time(self):
        # the gate's answer and a long text's redaction are remembered per text: a second look at
        # the same text (a failed call's output cut for its episode, its aftermath, its passage)
        # gives what the first gave, whichever came first
        from openmemory import shorten
        texts = [(" ".join(t for t, _ in SECRETS[i:i + 9]) + " and the staging password is hunter22 " * 3)
                 for i in range(0, len(SECRETS), 9)]
        self.assertTrue(all(len(t) > redact_module.REDACTED_KEPT_CHARS for t in texts))
        for text in texts:
            whole = redact_module._redact(text)       # the whole pattern everywhere, no gate, no memo
            self.assertNotEqual(whole, text)
            with self.subTest(text=text[:60]):
                for limit in (40, 160, 600, 100_000):
                    first = redact_module.secret_safe_clip(text, limit)
                    self.assertEqual(first, shorten.clip(whole if len(text) > limit else text, limit))
                    self.assertEqual(redact_module.redacted(text), whole)     # now remembered
                    self.assertEqual(redact_module._REDACTED_LONG.get(text), whole)
                    self.assertEqual(redact_module.secret_safe_clip(text, limit), first)
                    self.assertEqual(redact_module.redacted(text), whole)
                self.assertEqual(redact_module._possible(text), frozenset(redact_module._gate(text)[0]))

    def test_what_is_remembered_is_bounded(self):
        kept = redact_module._Kept(chars=100, longest=40)
        kept.put("x" * 41, "y")
        self.assertIsNone(kept.get("x" * 41))          # longer than longest: not kept
        kept.put("a" * 30, "b" * 30)
        self.assertEqual(kept.get("a" * 30), "b" * 30)
        kept.put("c" * 30, "d" * 30)                   # 120 characters held: past the bound, emptied first
        self.assertIsNone(kept.get("a" * 30))
        self.assertEqual(kept.get("c" * 30), "d" * 30)
        self.assertLessEqual(kept.held, 100)

    def test_a_secret_word_found_from_as_far_before_it_as_a_match_reaches(self):
        # the longest way in: a 30-character identifier, "_", then "SHARED_ACCESS_" before "KEY"
        for text in ("export ABCDEFGHIJKLMNOPQRSTUVWXYZabcd_SHARED_ACCESS_KEY=Zx9QmTr0ub4dor3xK2wq",
                     "a token, then ABCDEFGHIJKLMNOPQRSTUVWXYZabcd_SHARED_ACCESS_KEY=Zx9QmTr0ub4dor3xK2wq"):
            with self.subTest(text=text):
                self.assertNotIn("Zx9QmTr0ub4dor3xK2wq", redact(text))
                self.assertEqual(redact(text), redact_module._redact(text))

    def test_ordinary_text_is_stopped_at_the_gate(self):
        for text in ("pytest -q failed: 3 passed, 1 failed in 0.41s", "git push origin main --force",
                     "ModuleNotFoundError: No module named 'requests'", "see https://example.com/docs/setup",
                     "Edit src/components/Button.tsx — café"):
            with self.subTest(text=text):
                self.assertEqual(redact_module._possible(text), set())


class SecretWordsInProse(unittest.TestCase):
    """"token", "password" or "secret" in prose with no value after it is not looked at word by
    word; the same secrets are redacted wherever a value follows, in prose that names them."""

    # (text, what must not survive): prose that names the word, and then a secret in it
    NAMED = [
        ("the access token expires in an hour; the staging token is Zx8fQ2nR7pL4sW9kQ", "Zx8fQ2nR7pL4sW9kQ"),
        ("reset the password for the admin, then the password: hunter22x", "hunter22x"),
        ("rotate the secret every month. secret = opensesame42", "opensesame42"),
        ("the token page loads slowly\nrun it with --token x9Kq2Lm8Zp4R7wT", "x9Kq2Lm8Zp4R7wT"),
        ("send the password in a header, <password>Tr0ub4dor3</password>", "Tr0ub4dor3"),
        ("the deploy token for staging qX8mPz2LwK9vN4rT", "qX8mPz2LwK9vN4rT"),
        ("a token bucket limits requests; PASSWORD 'correct horse'", "correct horse"),
        ("la password del server è Hunter2Segreto", "Hunter2Segreto"),
        ("the secret key - s3cr3tKeyValue9", "s3cr3tKeyValue9"),
        ("the api key for staging: AbC123xYz789QwE", "AbC123xYz789QwE"),
        ("the token is rotated nightly; token Zx8fQ2nR7pL4sW9kQ", "Zx8fQ2nR7pL4sW9kQ"),
        ("the token expired again.\nDB_PASSWORD=Zx9QmTr0ub4dor", "Zx9QmTr0ub4dor"),
    ]
    PROSE = ["the access token expires in an hour", "reset the password for the admin user",
             "keep the client secret in the vault", "the token bucket refills every second",
             "call refresh_token when the session ends\n    return None  # renew the token before it expires"]

    def test_a_secret_named_in_prose_is_redacted_and_the_prose_kept(self):
        for text, secret in self.NAMED:
            with self.subTest(text=text):
                out = redact(text)
                self.assertNotIn(secret, out)
                self.assertIn("[REDACTED:", out)
                self.assertEqual(out, redact_module._redact(text))   # as the whole pattern, tried everywhere
                self.assertTrue(out.startswith(text[:12]))

    def test_prose_with_a_secret_word_and_no_value_is_not_read_word_by_word(self):
        # the gate lets the word branch through (the word is there), but no value follows it:
        # its handler is never called, and the text comes out as it went in
        calls = []
        handler = redact_module._HANDLERS["word"]
        redact_module._HANDLERS["word"] = lambda m: calls.append(m.group(0)) or handler(m)
        try:
            for text in self.PROSE:
                with self.subTest(text=text):
                    self.assertIn("word", redact_module._possible(text))
                    self.assertEqual(redact(text + " "), text + " ")
            self.assertEqual(calls, [])
            self.assertEqual(redact("the staging token is Zx8fQ2nR7pL4sW9kQ "), "the staging token is [REDACTED:secret] ")
            self.assertEqual(calls, ["token"])     # with a value after it, the word is read
        finally:
            redact_module._HANDLERS["word"] = handler

    def test_random_prose_with_secret_words_is_redacted_as_without_the_gate(self):
        # words, prose, the signs that name a value and the runs that may be one, few of each: most
        # texts hold a secret word and no value for it, the rest a value or a branch at its place
        import random
        rng = random.Random(21)
        words = ["password", "PASSWD", "Token", "tokens_used", "api key", "API_KEY", "secret", "pwd", "auth key",
                 "db_pass", "client secret", "secret access key", "Secret-Key", "apiKey", "mytoken", "x_token_y"]
        prose = ["the", "expired", "value", "reset", "for", "in", "an", "hour", "clave", "auth", "MIIB", "eyJhbGciOi",
                 "AKIA", "hunter2", "x9Kq2Lm8Zp4R", "Zx8fQ2nR7pL4sW9kQ", "1234567890123", "webhook", "key", "pass",
                 "secreto", "токен", "abcdefghijklmnopq", "²³⁴⁵⁶⁷⁸⁹¹²³⁴"]
        glue = [" ", " ", " ", "_", "-", "\n", ".", ",", "(", ")", "/", "é", "ſ", "İ", "\u212a", "\t", "  "]
        signs = [":", "=", " is ", "'", '"', ">", "<", "--", " - ", " of ", "は", " es ", " — "]
        alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_-"
        not_tried = 0
        for _ in range(4000):
            parts = []
            for _ in range(rng.randint(1, 12)):
                x = rng.random()
                parts.append(rng.choice(words) if x < 0.3 else rng.choice(prose) if x < 0.6 else rng.choice(glue)
                             if x < 0.9 else rng.choice(signs) if x < 0.95 else
                             "".join(rng.choice(alphabet) for _ in range(rng.choice((8, 12, 20, 40, 44, 88)))))
            text = "".join(parts)
            branches = redact_module._possible(text)
            not_tried += "word" in branches and not redact_module._value_may_follow(redact_module._folded(text))
            with self.subTest(text=text[:80]):
                self.assertEqual(redact(text), redact_module._redact(text))
        self.assertGreater(not_tried, 500)   # the word branch was left out often enough to tell


class EveryPathThatStoresOrWrites(TempHome):
    """Secrets said in words reach no file openmemory writes: database, index, lessons, reports, logs."""

    SAID = ["hunter2-Staging", "Pr0d-Secret-77", "Zx8fQ2nR7pL4sW9k", AWS_SECRET, body("p8").splitlines()[1]]

    def test_ingest_remember_sleep_render_morning_and_logs(self):
        cwd = str(self.tmp / "shop")
        Path(cwd).mkdir()
        for day in (2, 3):
            t = Transcript(cwd=cwd, start=__import__("datetime").datetime(2026, 11, day, 9, tzinfo=__import__(
                "datetime").timezone.utc))
            t.user("connect to the staging database")
            t.assistant(tools=[("Bash", {"command": "psql -h staging"},
                                f"Exit code 2\npsql: error: password authentication failed; key {AWS_SECRET}\n"
                                + body("p8"), True)])
            t.user("No, the staging database password is hunter2-Staging, always use it with psql")
            t.write(project_folder(self.claude, cwd))
        self.ok("ingest")
        note = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": {
            "title": "staging db password is Pr0d-Secret-77", "text": "the staging database password is Pr0d-Secret-77"}}}
        served = subprocess.run([sys.executable, "-m", "openmemory", "serve"], input=json.dumps(note).encode() + b"\n",
                                capture_output=True, env=self.env(CLAUDE_PROJECT_DIR=cwd), timeout=60)
        self.assertIn(b"Remembered as note", served.stdout)
        self.assertIn(b"REDACTED", served.stdout)
        event = {"hook_event_name": "SessionEnd", "transcript_path": "/nowhere/token Zx8fQ2nR7pL4sW9k.jsonl"}
        self.ok("hook", input=json.dumps(event), env=self.env(OPENMEMORY_DEBUG=1))  # a debug line, redacted too
        self.ok("sleep", "--now", "2026-11-05T03:00:00Z")
        # one correction makes a candidate, rendered once backed: the person approves each, so that
        # every lesson reaches MEMORY.md and its om file, the writes this test reads for secrets
        listed = json.loads(self.ok("lessons", "--json").stdout)
        self.assertTrue(listed)
        for lesson in listed:
            self.ok("lessons", "approve", f"lesson:{lesson['id']}")
        self.ok("render")
        morning = self.ok("morning").stdout + self.ok("morning", "--json").stdout
        recalled = self.ok("recall", "staging", "database", "password", "--json").stdout
        self.assertIn("REDACTED", recalled)
        written = [p for root in (self.home, self.claude / "projects") for p in root.rglob("*")
                   if p.is_file() and p.suffix != ".jsonl" or p.name == "lessons.jsonl"]
        self.assertIn(self.home / "lessons.jsonl", written)
        self.assertIn(self.home / "morning.md", written)
        self.assertIn(self.home / "logs" / "openmemory.log", written)
        self.assertTrue(any(p.name == "MEMORY.md" for p in written))
        self.assertIn("token [REDACTED", (self.home / "logs" / "openmemory.log").read_text())
        raw = b"".join(p.read_bytes() for p in written).lower()
        for token in (b"hunter2", b"pr0d", b"zx8fq2nr7pl4sw9k"):  # as the text index would hold them
            self.assertFalse(token in raw, token)
        for secret in self.SAID:
            for p in written:
                self.assertFalse(secret.encode() in p.read_bytes(), f"{secret[:12]}... is in {p}")
            self.assertNotIn(secret, morning + recalled)


class ASecretIsNoLesson(TempHome):
    """A correction whose lasting part is a secret teaches nothing that may be kept: no lesson, even
    with the values redacted; a correction beside it that teaches a way of working still does."""

    def test_a_correction_that_says_a_secret_makes_no_lesson(self):
        cwd = str(self.tmp / "shop")
        Path(cwd).mkdir()
        import datetime
        for day in (2, 3):
            t = Transcript(cwd=cwd, start=datetime.datetime(2026, 11, day, 9, tzinfo=datetime.timezone.utc))
            t.user("migrate the database")
            t.assistant(tools=[("Bash", {"command": "alembic upgrade head"}, "Exit code 1\nerror: auth failed", True)])
            t.user("No, always export DB_PASS=hunter2Xq9 and STRIPE_WEBHOOK=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLSgm "
                   "before migrating")
            t.user("build the docs")
            t.assistant(tools=[("Bash", {"command": "make docs"}, "Exit code 2\nmake: *** No rule to make target", True)])
            t.user("No, always build the docs with `mkdocs build --strict`, not make")
            t.write(project_folder(self.claude, cwd))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-05T03:00:00Z")
        self.ok("render")
        lessons = (self.home / "lessons.jsonl").read_text()
        self.assertIn("mkdocs build --strict", lessons)
        self.assertNotIn("DB_PASS", lessons)
        self.assertNotIn("STRIPE_WEBHOOK", lessons)
        self.assertNotIn("REDACTED", lessons)
        self.assertEqual(mostly_secret("No, always export DB_PASS=hunter2Xq9 before migrating"), True)
        self.assertEqual(mostly_secret("run the tests first; the token is in 1Password"), False)
        self.assertEqual(mostly_secret("use `pytest -q`, not unittest. The password is hunter2Xq9"), False)


class RedactedBeforeCut(TempHome):
    """Every text is redacted whole before it is cut: a secret across any cut (the 2,000 characters
    of an episode's detail, the 600 of a gist, a title's 140, a lesson's quote) leaves no part of
    itself in the database, recall, lessons.jsonl, the om files or MEMORY.md (issue 27)."""

    STRIPE = "sk_live_51HqLyjWDarjtT1zdp7dcXGzE"

    def test_no_part_of_a_secret_across_a_cut_survives(self):
        cwd = str(self.tmp / "shop")
        Path(cwd).mkdir()
        import datetime
        # Repeated at every offset a space shifts it by, so one copy straddles each cut whatever its place.
        output = "Exit code 1\nerror: upload refused\n" + " ".join([AWS_SECRET] * 80)
        said = "No, always upload with " + " ".join([self.STRIPE] * 80)
        for day in (2, 3):
            t = Transcript(cwd=cwd, start=datetime.datetime(2026, 11, day, 9, tzinfo=datetime.timezone.utc))
            t.user("upload the release")
            t.assistant(tools=[("Bash", {"command": "make upload"}, output, True)])
            t.user(said)
            t.assistant(tools=[("Bash", {"command": "make upload"}, output, True)])
            t.write(project_folder(self.claude, cwd))
        self.ok("ingest")
        self.ok("sleep", "--now", "2026-11-05T03:00:00Z")
        self.ok("render")
        recalled = "".join(self.ok("recall", *q.split(), "--json").stdout for q in ("upload refused", "always upload with"))
        self.assertIn("REDACTED", self.ok("recall", "always", "upload", "with").stdout)
        written = [p for root in (self.home, self.claude / "projects") for p in root.rglob("*")
                   if p.is_file() and p.suffix != ".jsonl" or p.name == "lessons.jsonl"]
        self.assertIn(self.home / "memory.db", written)
        raw = b"".join(p.read_bytes() for p in written).decode("utf-8", "replace") + recalled
        for secret in (AWS_SECRET, self.STRIPE):
            for k in range(len(secret) - 9):
                self.assertNotIn(secret[k:k + 10], raw, f"{secret[k:k + 10]} of {secret[:6]}... survives")


if __name__ == "__main__":
    unittest.main()
