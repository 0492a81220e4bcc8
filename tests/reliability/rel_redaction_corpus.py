"""Fake but real-looking secrets that redaction must catch, and ordinary text it must keep.

Secrets are assembled at import from a seeded generator, so no file holds a literal
key-shaped string (secret scanners stay quiet) and every run sees the same corpus.
Each secret comes with the context it is pasted in: a shell export, a config line, a
header, a URL, a log line, prose in English or Chinese.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

_RNG = random.Random(20261130)
_ALNUM = string.ascii_letters + string.digits


def _r(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


def _b64url(data: dict[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass(frozen=True, slots=True)
class Secret:
    """A secret value, the text it appears in, and the marker kind expected for it."""

    kind: str
    value: str
    text: str


def _pem(label: str, lines: int = 6) -> str:
    body = "\n".join(_r(64, _ALNUM + "+/") for _ in range(lines)) + "\n" + _r(20) + "=="
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def _secrets() -> list[Secret]:
    openai_old = "sk-" + _r(20) + "T3Blbk" + "FJ" + _r(20)
    openai_proj = "sk-" + "proj-" + _r(74, _ALNUM + "_-") + "A1"
    deepseek = "sk-" + _r(31, "0123456789abcdef") + "7"
    anthropic = "sk-" + "ant-" + "api03-" + _r(86, _ALNUM + "_-") + "AA"
    github_pat = "ghp" + "_" + _r(36)
    github_fine = "github" + "_pat_" + _r(22) + "_" + _r(59)
    gho = "gho" + "_" + _r(36)
    gitlab = "glpat" + "-" + _r(20, _ALNUM + "_-")
    slack_bot = "xoxb" + "-" + _r(12, string.digits) + "-" + _r(13, string.digits) + "-" + _r(24)
    slack_hook = (
        "https://hooks.slack.com/services/T"
        + _r(8, string.ascii_uppercase + string.digits)
        + "/B"
        + _r(10, string.ascii_uppercase + string.digits)
        + "/"
        + _r(24)
    )
    stripe = "sk" + "_live_" + _r(24)
    stripe_restricted = "rk" + "_test_" + _r(24)
    google = "AIza" + _r(35, _ALNUM + "_-")
    google_oauth = "ya29" + "." + _r(60, _ALNUM + "_-")
    hf = "hf" + "_" + _r(34)
    npm = "npm" + "_" + _r(36)
    pypi = "pypi-" + "AgEIcHlwaS5vcmc" + _r(60, _ALNUM + "_-")
    sendgrid = "SG" + "." + _r(22, _ALNUM + "_-") + "." + _r(43, _ALNUM + "_-")
    aws_id = "AKIA" + _r(16, string.ascii_uppercase + string.digits)
    aws_temp = "ASIA" + _r(16, string.ascii_uppercase + string.digits)
    aws_secret = _r(40, _ALNUM + "/+")
    jwt = ".".join(
        [
            _b64url({"alg": "HS256", "typ": "JWT"}),
            _b64url({"sub": _r(8), "name": "Jane", "iat": 1516239022}),
            _r(43, _ALNUM + "_-"),
        ]
    )
    bearer = _r(32, _ALNUM + "-._~") + "9"
    basic = base64.b64encode(f"admin:{_r(12)}".encode()).decode()
    db_password = _r(14, _ALNUM + "!#$%^&*") + "9"
    url_password = _r(16)
    plain_password = "hunter2-" + _r(6)
    quoted_password = "correct horse " + _r(6) + " staple"
    zh_password = "Passw0rd!" + _r(4)
    client_secret = _r(32)
    api_key_generic = _r(40, "0123456789abcdef")
    rsa, openssh = _pem("RSA PRIVATE KEY"), _pem("OPENSSH PRIVATE KEY")
    ec, pkcs8 = _pem("EC PRIVATE KEY", 2), _pem("PRIVATE KEY")
    cut_off = "-----BEGIN ENCRYPTED PRIVATE KEY-----\n" + _r(64, _ALNUM + "+/")
    return [
        Secret("openai_key", openai_old, f"export OPENAI_API_KEY={openai_old}"),
        Secret("openai_key", openai_proj, f"client = OpenAI(api_key='{openai_proj}')"),
        Secret("api_key", deepseek, f"DeepSeek 的 key 是 {deepseek}，别外传"),
        Secret("anthropic_key", anthropic, f'{{"anthropic_api_key": "{anthropic}"}}'),
        Secret("github_token", github_pat, f"git clone https://{github_pat}@github.com/o/r.git"),
        Secret("github_token", github_fine, f"GH_TOKEN={github_fine} gh pr list"),
        Secret("github_token", gho, f"oauth token: {gho}"),
        Secret("gitlab_token", gitlab, f"PRIVATE-TOKEN: {gitlab}"),
        Secret("slack_token", slack_bot, f"SLACK_BOT_TOKEN={slack_bot}"),
        Secret("slack_webhook", slack_hook, f"curl -X POST {slack_hook} -d '{{}}'"),
        Secret("stripe_key", stripe, f'Stripe.api_key = "{stripe}"'),
        Secret("stripe_key", stripe_restricted, f"use {stripe_restricted} in staging"),
        Secret("google_api_key", google, f"https://maps.googleapis.com/maps/api?key={google}"),
        Secret("google_oauth_token", google_oauth, f"access token {google_oauth} expires soon"),
        Secret("huggingface_token", hf, f"huggingface-cli login --token {hf}"),
        Secret("npm_token", npm, f"//registry.npmjs.org/:_authToken={npm}"),
        Secret("pypi_token", pypi, f"[pypi]\nusername = __token__\npassword = {pypi}"),
        Secret("sendgrid_key", sendgrid, f"SENDGRID_API_KEY='{sendgrid}'"),
        Secret("aws_access_key", aws_id, f"aws_access_key_id = {aws_id}"),
        Secret("aws_access_key", aws_temp, f"临时凭证 {aws_temp} 一小时后过期"),
        Secret("secret", aws_secret, f"aws_secret_access_key = {aws_secret}"),
        Secret("jwt", jwt, f"cookie: session={jwt}; Path=/"),
        Secret("bearer", bearer, f"curl -H 'Authorization: Bearer {bearer}' https://api.x.io"),
        Secret("bearer", basic, f"Authorization: Basic {basic}"),
        Secret("secret", db_password, f"DB_PASSWORD={db_password}"),
        Secret(
            "url_password", url_password, f"postgres://app:{url_password}@db.internal:5432/prod"
        ),
        Secret("url_password", url_password[::-1], f"redis://:{url_password[::-1]}@cache:6379/0"),
        Secret("secret", plain_password, f"my password is password={plain_password} ok"),
        Secret("secret", quoted_password, f'password: "{quoted_password}"'),
        Secret("secret", zh_password, f"服务器密码：{zh_password}"),
        Secret("secret", client_secret, f"client_secret: {client_secret}"),
        Secret("secret", api_key_generic, f"X_API_KEY: {api_key_generic}"),
        Secret("private_key", rsa, "key:\n" + rsa),
        Secret("private_key", openssh, openssh),
        Secret("private_key", ec, "```\n" + ec + "\n```"),
        Secret("private_key", pkcs8, "私钥如下：\n" + pkcs8),
        Secret("private_key", cut_off, "pasted (cut off):\n" + cut_off),
    ]


SECRETS: tuple[Secret, ...] = tuple(_secrets())

# Text that looks a little like secrets (ids, hashes, budgets, URLs, code) but is not one.
ORDINARY: tuple[str, ...] = (
    "预算不超过3000元（含税），周五前交付。",
    "以后都用 PostgreSQL 16，不要用 MySQL；p95 延迟控制在 200 ms 以内。",
    "请帮我重置密码流程的文档写一下：用户点击“忘记密码”后收到邮件。",
    "密码是什么时候改的？",
    "令牌桶算法的容量设为 100，每秒补充 10 个令牌。",
    "Keep p95 latency under 200 ms when the cache is warm.",
    "Reset your password from the settings page; tokens expire after 24 h.",
    "Set max_tokens=4096 and temperature=0.2 for the summarizer.",
    "token: 4096",
    "The token budget is 3000; the soft budget is 600 tokens.",
    "password reset emails are rate limited to 5 per hour",
    "The bearer of this letter is my colleague.",
    "Bearer tokens are described in RFC 6750.",
    "commit 3f33903a9d1c6f0e2b7a4c5d8e9f0a1b2c3d4e5f fixed the build",
    "uuid 6f1c2a4e-3b5d-4e8f-9a7b-1c2d3e4f5a6b is the namespace",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "See https://docs.python.org/3/library/re.html#re.sub for details.",
    "Email me at jane.doe@example.com or ping @jane on chat.",
    "git@github.com:octo/repo.git is the remote",
    "ssh -i ~/.ssh/id_ed25519 deploy@10.0.0.7 -p 2222",
    "The file /home/user/.config/app/settings.toml has the defaults.",
    "task-list-for-the-migration-2026 is the branch name",
    "Use scikit-learn (sk-learn) 1.5 and numpy 2.1.",
    "ask-me-anything-session-2026-11 is booked",
    "The AKIA prefix marks AWS access key ids; never paste one here.",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUP\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    "config: {auth: true, retries: 3, timeout: 30s}",
    "credentials are stored in the OS keychain, not in this file",
    "secret: see vault path kv/app/prod",
    'headers = {"Authorization": f"Bearer {token}"}',
    "export PATH=$HOME/bin:$PATH",
    "https://example.com/search?q=password+manager&page=2",
    "https://user@example.com/path (no password in this URL)",
    "日本語のテキストと한국어 mixed with English — 🙂 é",
    "if password == confirm: save()",
    "Keys: sk, pk, rk are Stripe prefixes; sk_live_ is a secret one.",
    "eyJ is what base64 of '{\"' starts with.",
    "数字 9999 与 3000 都是预算的候选值",
    "The api_key field is required; pass it via --api-key.",
)
