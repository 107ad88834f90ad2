#!/usr/bin/env python3
"""Hand-made hostile KeePass XML documents for the old/new differential of the KeePass XML reader.

    Tests/differential/keepass_hostile_documents.py DIR
    Tests/differential/keepass_files_differential.py OLD NEW DIR/*.xml Fixtures/import/*.xml Fixtures/kdbx/*.kdbx ...

CDATA and references in keys and values, KeePass 2's indented CRLF layout, nested groups and the
recycle bin, repeated titles, reserved and non-ASCII keys, every TOTP form, history and attachments,
attribute forms, and broken documents (named err-*) whose message and line must not change.
"""
import base64, os, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
b64 = lambda s: base64.b64encode(s.encode() if isinstance(s, str) else s).decode()
HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'

def doc(root, meta='<Meta><Generator>KeePassXC</Generator></Meta>', nl='\n'):
    return (HEAD + '<KeePassFile>' + meta + '<Root>' + root + '</Root></KeePassFile>' + nl)

def s(k, v, attrs=''):
    return '<String><Key>%s</Key><Value%s>%s</Value></String>' % (k, attrs, v)

def entry(*parts, times='<Times><LastModificationTime>2023-11-14T22:13:20Z</LastModificationTime><CreationTime>2023-11-14T22:13:20Z</CreationTime></Times>', uuid=None):
    return '<Entry>' + ('<UUID>%s</UUID>' % uuid if uuid else '') + times + ''.join(parts) + '</Entry>'

def group(name, *content, notes=None, uuid=None):
    return '<Group>' + ('<UUID>%s</UUID>' % uuid if uuid else '') + '<Name>%s</Name>' % name + ('<Notes>%s</Notes>' % notes if notes else '') + ''.join(content) + '</Group>'

files = {}
# CDATA, entities, character references in keys and values
files['cdata-entities'] = doc(group('Root',
    entry(s('Title', '<![CDATA[a<b]]>'), s('Password', 'p&amp;w&#x41;&#66;&lt;&gt;&quot;&apos;', ' ProtectInMemory="True"'),
          s('<![CDATA[UserName]]>', 'cdata-key-user'), s('Us&#101;rName', 'entity-key-user'), s('URL', 'https://x.example/?a=1&amp;b=2')),
    entry(s('Title', 'ampersand &amp; title'), s('Password', '<![CDATA[]]>'), s('Notes', 'line1\r\nline2\rline3\nend')),
))
# indented like KeePass 2 writes it, with CRLF line ends
ind = '\r\n'.join([
    '<KeePassFile>', '\t<Meta>', '\t\t<Generator>KeePass</Generator>', '\t</Meta>', '\t<Root>', '\t\t<Group>', '\t\t\t<UUID>AAAAAAAAAAAAAAAAAAAAAA==</UUID>', '\t\t\t<Name>Database</Name>',
    '\t\t\t<Entry>', '\t\t\t\t<UUID>%s</UUID>' % b64('u1' * 8), '\t\t\t\t<IconID> 0 </IconID>', '\t\t\t\t<Times>', '\t\t\t\t\t<CreationTime>2020-01-01T00:00:00Z</CreationTime>',
    '\t\t\t\t\t<LastModificationTime>2021-01-01T00:00:00Z</LastModificationTime>', '\t\t\t\t\t<LastAccessTime>2021-01-01T00:00:00Z</LastAccessTime>', '\t\t\t\t\t<ExpiryTime>2030-01-01T00:00:00Z</ExpiryTime>',
    '\t\t\t\t\t<Expires>True</Expires>', '\t\t\t\t\t<UsageCount>0</UsageCount>', '\t\t\t\t</Times>',
    '\t\t\t\t<String>', '\t\t\t\t\t<Key>Title</Key>', '\t\t\t\t\t<Value>indented</Value>', '\t\t\t\t</String>',
    '\t\t\t\t<String>', '\t\t\t\t\t<Key>Password</Key>', '\t\t\t\t\t<Value ProtectInMemory="True">pw1</Value>', '\t\t\t\t</String>',
    '\t\t\t\t<String>\r\n\t\t\t\t\t<Key >UserName</Key >\r\n\t\t\t\t\t<Value>u</Value>\r\n\t\t\t\t</String>',
    '\t\t\t\t<String><!-- a comment --><Key>Custom Field</Key><Value ProtectInMemory="False" >c</Value></String>',
    '\t\t\t\t<AutoType><Enabled>True</Enabled><DataTransferObfuscation>0</DataTransferObfuscation></AutoType>',
    '\t\t\t\t<History>', '\t\t\t\t\t<Entry>', '\t\t\t\t\t\t<Times><LastModificationTime>2020-06-01T00:00:00Z</LastModificationTime></Times>',
    '\t\t\t\t\t\t<String><Key>Title</Key><Value>old title</Value></String>', '\t\t\t\t\t\t<String><Key>Password</Key><Value>old-pw</Value></String>', '\t\t\t\t\t</Entry>', '\t\t\t\t</History>',
    '\t\t\t</Entry>', '\t\t</Group>', '\t</Root>', '</KeePassFile>', ''])
files['indented-crlf'] = HEAD.replace('\n', '\r\n') + ind
# nested groups, recycle bin, group notes, repeated titles, reserved and non-ASCII keys, TOTP forms
files['nested-names-totp'] = doc(group('Root',
    group('Work', group('Deep', group('Deeper', entry(s('Title', 'same'), s('Password', 'a'), s('UserName', 'zed'))),
                        entry(s('Title', 'same'), s('Password', 'b'), s('UserName', 'amy'))), notes='group notes'),
    group('Recycle Bin', entry(s('Title', 'deleted'), s('Password', 'x'))),
    group('\u00dcnic\u00f6de/\u65e5\u672c', entry(s('Title', 'same'), s('Password', 'c'))),
    entry(s('Title', 'same'), s('Password', 'd'), s('title', 'reserved title'), s('totp', 'reserved totp'), s('username', 'custom username'),
          s('P\u00e4ssword', 'umlaut key'), s('\u039a\u03bb\u03b5\u03b9\u03b4\u03af', 'greek key'), s('a b', 'space'), s('a_b', 'underscore'),
          s('\u212aP2A_URL', 'https://kelvin.example'), s('KP2A_URL', 'https://kp2a.example'), s('KP2A_URL_1', 'https://kp2a1.example'), s('KP2A_URL_X', 'https://kp2ax.example'),
          s('URL', 'https://main.example')),
    entry(s('Title', 'otp entry'), s('Password', 'e'), s('otp', 'otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&amp;period=30&amp;digits=6')),
    entry(s('Title', 'timeotp'), s('Password', 'f'), s('TimeOtp-Secret-Base32', 'JBSW Y3DP EHPK 3PXP'), s('TimeOtp-Length', '8'), s('TimeOtp-Period', '60'), s('TimeOtp-Algorithm', 'HMAC-SHA-256')),
    entry(s('Title', 'timeotp hex'), s('Password', 'g'), s('TimeOtp-Secret-Hex', '48656c6c6f21deadbeef'), s('TimeOtp-Extra', 'kept?')),
    entry(s('Title', 'seed'), s('Password', 'h'), s('TOTP Seed', 'JBSWY3DPEHPK3PXP'), s('TOTP Settings', '30;6')),
    entry(s('Title', 'steam'), s('Password', 'i'), s('TOTP Seed', 'JBSWY3DPEHPK3PXP'), s('TOTP Settings', '30;S')),
    entry(s('Title', 'bad otp'), s('Password', 'j'), s('TimeOtp-Secret-Base32', '!!!')),
    entry(s('Title', ''), s('Password', 'untitled'), s('URL', 'https://news.ycombinator.com')),
    entry(s('Title', 'https://news.ycombinator.com'), s('Password', 'k')),
))
# history, binaries by reference and inline, tags, empty values, Value before Key, duplicate keys
files['history-binaries'] = doc(group('Root',
    entry(s('Password', 'value first'), '<String><Value>v-before-k</Value><Key>Title</Key></String>', s('Title', 'second title ignored'),
          '<String><Key>Notes</Key><Value/></String>', '<String><Key>Empty</Key><Value></Value></String>', '<String><Key>NoValue</Key></String>',
          '<Binary><Key>a.txt</Key><Value Ref="0"/></Binary>', '<Binary><Key>inline.bin</Key><Value>%s</Value></Binary>' % b64('inline bytes'),
          '<Tags>t1;t2</Tags>', '<ForegroundColor>#FF0000</ForegroundColor>', '<OverrideURL>cmd://x</OverrideURL>',
          '<CustomData><Item><Key>k</Key><Value>v</Value></Item></CustomData>', '<QualityCheck>False</QualityCheck>', '<PreviousParentGroup>%s</PreviousParentGroup>' % b64('p' * 16),
          '<History>' + entry(s('Title', 'h1'), s('Password', 'hp1'), '<Binary><Key>a.txt</Key><Value Ref="1"/></Binary>',
                              times='<Times><LastModificationTime>2019-01-01T00:00:00Z</LastModificationTime></Times>')
          + entry(s('Title', 'value first'), s('Password', 'hp2'), s('Custom', 'hc'), times='<Times><LastModificationTime>2020-01-01T00:00:00Z</LastModificationTime><CreationTime>AAAAAAAAAAA=</CreationTime></Times>') + '</History>',
          uuid=b64('e' * 16)),
), meta='<Meta><Generator>KeePass</Generator><DatabaseName>db</DatabaseName><Binaries><Binary ID="0">%s</Binary><Binary ID="1" Compressed="False">%s</Binary></Binaries><CustomIcons><Icon/></CustomIcons></Meta>' % (b64('zero'), b64('one')))
# attribute forms, whitespace in times, odd but valid tags
files['attribute-forms'] = doc(group('Root',
    entry(s('Title', 'attrs'), s('Password', 'p1', " ProtectInMemory='true' "), s('A', 'a', ' Protected="False" ProtectInMemory="True"'),
          s('B', 'b', ' ProtectInMemory="TRUE"'), s('C', 'c', ' ProtectInMemory=" True "'), s('D', 'd', ' ProtectInMemory="&#84;rue"'),
          '<String ><Key\t>E</Key\n><Value\r\n>e</Value></String >',
          times='<Times>\n<LastModificationTime> 2023-11-14T22:13:20Z </LastModificationTime>\n<CreationTime>2023-11-14T22:13:20.123Z</CreationTime></Times>'),
    entry(s('Title', 'times other order'), s('Password', 'q'), times='<Times><CreationTime>2001-01-01T00:00:00Z</CreationTime><LastModificationTime>2002-01-01T00:00:00Z</LastModificationTime><CreationTime>2003-01-01T00:00:00Z</CreationTime></Times>'),
    entry(s('Title', 'no times'), s('Password', 'r'), times=''),
    entry(s('Title', 'empty times'), s('Password', 's'), times='<Times><LastModificationTime></LastModificationTime><CreationTime/></Times>'),
))
# errors: each must fail the same way (message and line)
bad_time = '<Times>\n<LastModificationTime>2023-11-14T22:13:20Z</LastModificationTime>\n<CreationTime>\nnot a time</CreationTime></Times>'
files['err-time-line'] = doc(group('Root', '\n'.join(entry(s('Title', 't%d' % i), s('Password', 'x')) for i in range(5)) + '\n' + entry(s('Title', 'bad'), times=bad_time)))
files['err-time-fast'] = doc(group('Root', entry(s('Title', 'a')), '\n\n', entry(s('Title', 'bad'), times='<Times><LastModificationTime>yesterday</LastModificationTime></Times>')))
files['err-end-tag'] = doc(group('Root', entry(s('Title', 'a')), '\n', '<Entry><String><Key>Title</Kez><Value>x</Value></String></Entry>'))
files['err-end-tag2'] = doc(group('Root', '<Entry><String><Key>Title</KeyX><Value>x</Value></String></Entry>'))
files['err-end-tag-space'] = doc(group('Root', '<Entry><String><Key>Title</Key ><Value>x</Value ></String></Entry>'))
files['err-bad-ref'] = doc(group('Root', '\n' + entry(s('Title', 'a&b'))))
files['err-bad-ref-key'] = doc(group('Root', '\n' + entry(s('Ti&tle;', 'x'))))
files['err-no-key'] = doc(group('Root', '\n\n' + entry('<String><Value>x</Value></String>')))
files['err-protected'] = doc(group('Root', '\n' + entry(s('Title', 'p'), '\n', s('Password', b64('secret'), ' Protected="True"'))))
files['err-text-in-entry'] = doc(group('Root', entry(s('Title', 'a'), 'stray text')))
files['err-child-in-key'] = doc(group('Root', entry('<String><Key>Ti<b>t</b>le</Key><Value>x</Value></String>')))
files['err-truncated'] = doc(group('Root', entry(s('Title', 'a'), s('Password', 'b'))))[:-60]
files['err-dup-attr'] = doc(group('Root', entry(s('Title', 'a'), s('Password', 'b', ' ProtectInMemory="True" ProtectInMemory="False"'))))
deep = 'x'
for d in range(130): deep = group('g%d' % d, deep if d else entry(s('Title', 'deep')))
files['err-too-deep'] = doc(deep)
ok_deep = ''
for d in range(120): ok_deep = group('g%d' % d, ok_deep if d else entry(s('Title', 'deep ok'), s('Password', 'z')))
files['deep-ok'] = doc(ok_deep)
files['err-nul'] = doc(group('Root', entry(s('Title', 'a\x00b'))))
files['err-second-root'] = doc(group('Root', entry(s('Title', 'a')))) + '<KeePassFile/>'
files['comments-pi'] = HEAD + '<!-- top --><KeePassFile><?pi x?><Meta/><Root><!-- r --><Group><Name>R</Name><Entry><!--c--><String><!--c--><Key>Title</Key><!--c--><Value>c<!-- in text -->d</Value></String></Entry></Group></Root></KeePassFile><!-- end -->\n'
for name, text in files.items():
    with open(os.path.join(out, name + '.xml'), 'wb') as f:
        f.write(text.encode('utf-8', 'surrogatepass'))
print(len(files), 'files in', out)
