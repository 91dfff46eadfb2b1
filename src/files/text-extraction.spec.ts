import { extractText, htmlToText } from './text-extraction.js';

describe('extractText', () => {
  it('keeps text and Markdown as they are', () => {
    expect(extractText('a.md', 'application/octet-stream', Buffer.from('# T\n\nbody'))).toEqual({
      status: 'extracted',
      text: '# T\n\nbody',
    });
    expect(extractText('notes', 'text/plain; charset=utf-8', Buffer.from('plain'))).toEqual({
      status: 'extracted',
      text: 'plain',
    });
  });

  it('marks PDF, DOCX, unknown binaries and non-UTF-8 or NUL-bearing text unavailable', () => {
    const unavailable = { status: 'unavailable', text: null };
    expect(extractText('a.pdf', 'application/pdf', Buffer.from('%PDF-1.7'))).toEqual(unavailable);
    expect(extractText('a.docx', 'application/octet-stream', Buffer.from('PK'))).toEqual(unavailable);
    expect(extractText('a.txt', 'text/plain', Buffer.from([0xff, 0xfe, 0x41]))).toEqual(unavailable);
    expect(extractText('a.txt', 'text/plain', Buffer.from('a\u0000b'))).toEqual(unavailable);
  });

  it('reduces HTML (by extension or media type) to its visible text', () => {
    expect(extractText('page', 'text/html', Buffer.from('<p>a</p><p>b</p>')).text).toBe('a\n\nb');
    expect(extractText('page.htm', 'application/octet-stream', Buffer.from('<b>bold</b>')).text).toBe('bold');
  });
});

describe('htmlToText', () => {
  it('drops comments, tags with quoted ">" and hidden elements whatever they hold', () => {
    const html =
      '<HEAD><title>x</title></HEAD><!-- <p>no</p> --><div data-x="1 > 0" title=\'<p>\'>shown</div>' +
      '<SCRIPT>if (a<b && "</p>") {}</Script ><style>p{}</style>after';
    expect(htmlToText(html)).toBe('shown\nafter');
  });

  it('decodes entities and keeps stray "<" and invalid references readable', () => {
    expect(htmlToText('1 < 2 &amp;&lt;&#65;&#x42;&#0;&bogus; &nbsp;x')).toBe('1 < 2 &<AB\uFFFD&bogus; x');
  });

  it('ends at the text when a tag, comment or hidden element is never closed', () => {
    expect(htmlToText('kept<p title="open')).toBe('kept');
    expect(htmlToText('kept<!-- open')).toBe('kept');
    expect(htmlToText('kept<script>never closed')).toBe('kept');
  });

  it('collapses whitespace and keeps at most one blank line', () => {
    expect(htmlToText('<p>  a \t b </p>\n\n\n<br><br><br><p>c</p>')).toBe('a b\n\nc');
  });
});
