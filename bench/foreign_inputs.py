"""The same n entries in the exports of other password managers (issue 44), for bench/scale.py.

Each file holds what its producer writes for a login: a title, a username, a password, and (where
the format has them) a URL and a time; names are unique, except in the repeated-title Chrome export
(a browser's with ten accounts per site: each title and URL ten times, its names numbered `TITLE (n)`).
ROWS lists (row label, --format, suffix).
"""
import csv
import io
import json
import zipfile
from xml.sax.saxutils import escape

ROWS = [
    ("import keepass-xml", "keepass-xml", "kp.xml"),
    ("import bitwarden-csv", "bitwarden-csv", "bw.csv"),
    ("import 1password-csv", "1password-csv", "1p.csv"),
    ("import 1pux", "1pux", "1pux"),
    ("import lastpass-csv", "lastpass-csv", "lp.csv"),
    ("import chrome-csv", "chrome-csv", "chrome.csv"),
    ("import chrome-csv (repeated titles)", "chrome-csv", "chrome-repeated.csv"),
    ("import firefox-csv", "firefox-csv", "firefox.csv"),
    ("import dashlane-csv", "dashlane-csv", "dashlane.csv"),
    ("import enpass-json", "enpass-json", "enpass.json"),
]


def _csv(path, header, rows):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)


def write(work, n, entries):
    """Writes in-N.SUFFIX for every row of ROWS."""
    logins = [(e["name"].replace("/", "-"), e["fields"]["username"], e["value"]) for e in entries]
    with open(f"{work}/in-{n}.kp.xml", "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<KeePassFile><Meta><Generator>KeePassXC</Generator></Meta>'
                "<Root><Group><Name>Passwords</Name>")
        for title, user, value in logins:
            f.write("<Entry><Times><LastModificationTime>2023-11-14T22:13:20Z</LastModificationTime>"
                    "<CreationTime>2023-11-14T22:13:20Z</CreationTime></Times>"
                    f"<String><Key>Password</Key><Value ProtectInMemory=\"True\">{escape(value)}</Value></String>"
                    f"<String><Key>Title</Key><Value>{escape(title)}</Value></String>"
                    f"<String><Key>UserName</Key><Value>{escape(user)}</Value></String></Entry>")
        f.write("</Group></Root></KeePassFile>\n")
    _csv(f"{work}/in-{n}.bw.csv", ["folder", "favorite", "type", "name", "notes", "fields", "reprompt", "login_uri",
                                    "login_username", "login_password", "login_totp"],
         [["", "", "login", t, "", "", "0", "", u, v, ""] for t, u, v in logins])
    _csv(f"{work}/in-{n}.1p.csv", ["Title", "Url", "Username", "Password", "OTPAuth", "Favorite", "Archived", "Tags", "Notes"],
         [[t, "", u, v, "", "false", "false", "", ""] for t, u, v in logins])
    _csv(f"{work}/in-{n}.lp.csv", ["url", "username", "password", "totp", "extra", "name", "grouping", "fav"],
         [["", u, v, "", "", t, "", "0"] for t, u, v in logins])
    _csv(f"{work}/in-{n}.chrome.csv", ["name", "url", "username", "password", "note"], [[t, "", u, v, ""] for t, u, v in logins])
    # Ten accounts per site: the title and URL of every tenth login, in file order.
    _csv(f"{work}/in-{n}.chrome-repeated.csv", ["name", "url", "username", "password", "note"],
         [[logins[i - i % 10][0], f"https://{logins[i - i % 10][0]}.example/", u, v, ""] for i, (_, u, v) in enumerate(logins)])
    _csv(f"{work}/in-{n}.firefox.csv", ["url", "username", "password", "httpRealm", "formActionOrigin", "guid", "timeCreated",
                                         "timeLastUsed", "timePasswordChanged"],
         [[f"https://{t}.example", u, v, "", "", "", "1700000000000", "", "1700000000000"] for t, u, v in logins])
    _csv(f"{work}/in-{n}.dashlane.csv", ["username", "username2", "username3", "title", "password", "note", "url", "category", "otpSecret"],
         [[u, "", "", t, v, "", "", "", ""] for t, u, v in logins])
    with open(f"{work}/in-{n}.enpass.json", "w") as f:
        json.dump({"folders": [], "items": [
            {"title": t, "category": "login", "createdAt": 1700000000, "updated_at": 1700000000, "favorite": 0, "archived": 0,
             "trashed": 0, "note": "", "fields": [
                 {"label": "Username", "type": "username", "value": u, "sensitive": 0, "deleted": 0},
                 {"label": "Password", "type": "password", "value": v, "sensitive": 1, "deleted": 0}]} for t, u, v in logins]}, f)
    data = {"accounts": [{"attrs": {"accountName": "bench"}, "vaults": [{"attrs": {"name": "Private"}, "items": [
        {"uuid": f"{i}", "favIndex": 0, "createdAt": 1700000000, "updatedAt": 1700000000, "state": "active", "categoryUuid": "001",
         "details": {"loginFields": [{"value": u, "designation": "username"}, {"value": v, "designation": "password"}]},
         "overview": {"title": t}} for i, (t, u, v) in enumerate(logins)]}]}]}
    buffer = io.StringIO()
    json.dump(data, buffer)
    with zipfile.ZipFile(f"{work}/in-{n}.1pux", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("export.attributes", json.dumps({"version": 3, "description": "1Password Unencrypted Export"}))
        archive.writestr("export.data", buffer.getvalue())
