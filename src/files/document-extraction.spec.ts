import { docxOf, pdfOf } from '../../test/support/documents.js';
import { extractFileText } from './text-extraction.js';

describe('extractFileText (documents)', () => {
  it('reads the text of every page of a PDF, by extension or media type', async () => {
    const pdf = pdfOf(['The office opens at nine.', 'Parking is behind the building.']);
    const byName = await extractFileText('handbook.pdf', 'application/octet-stream', pdf);
    expect(byName.status).toBe('extracted');
    expect(byName.text).toContain('The office opens at nine.');
    expect(byName.text).toContain('Parking is behind the building.');
    expect((await extractFileText('blob', 'application/pdf', pdf)).status).toBe('extracted');
  });

  it('reads the paragraphs of a DOCX', async () => {
    const docx = docxOf(['Expenses are filed monthly.', 'Receipts & invoices <scanned>.']);
    const extracted = await extractFileText('policy.docx', 'application/octet-stream', docx);
    expect(extracted).toEqual({
      status: 'extracted',
      text: 'Expenses are filed monthly.\n\nReceipts & invoices <scanned>.',
    });
  });

  it('marks a damaged or mislabelled document unavailable rather than failing', async () => {
    const unavailable = { status: 'unavailable', text: null };
    expect(await extractFileText('a.pdf', 'application/pdf', Buffer.from('%PDF-1.7 nothing'))).toEqual(
      unavailable,
    );
    expect(await extractFileText('a.docx', 'application/octet-stream', Buffer.from('PK'))).toEqual(
      unavailable,
    );
    expect(await extractFileText('a.docx', 'application/octet-stream', Buffer.from('plain text'))).toEqual(
      unavailable,
    );
  });
});
