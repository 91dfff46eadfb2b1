import { fileCitations, type SearchedPassage } from './file-citations.js';

const handbook: SearchedPassage = {
  file_id: 'file-1',
  filename: 'handbook.md',
  text: 'The office opens at nine and closes at five.',
};
const parking: SearchedPassage = {
  file_id: 'file-2',
  filename: 'parking.md',
  text: 'Parking permits are renewed every January at the desk.',
};

describe('fileCitations', () => {
  it('cites a file the answer names, just after its name, in any case', () => {
    const answer = 'It opens at nine [Handbook.md].';
    expect(fileCitations(answer, [handbook, parking])).toEqual([
      { type: 'file_citation', index: answer.indexOf(']'), file_id: 'file-1', filename: 'handbook.md' },
    ]);
  });

  it('cites a file the answer quotes (six words in a row, without case or punctuation)', () => {
    const answer = 'Good news: parking PERMITS are renewed, every January!';
    expect(fileCitations(answer, [handbook, parking])).toEqual([
      {
        type: 'file_citation',
        index: answer.indexOf('January') + 7,
        file_id: 'file-2',
        filename: 'parking.md',
      },
    ]);
  });

  it('cites nothing for an answer that neither names nor quotes a searched file', () => {
    expect(fileCitations('It opens at nine.', [handbook, parking])).toEqual([]);
    expect(fileCitations('See handbook.md.', [])).toEqual([]);
  });

  it('cites each file once, at its first place, in the order of the text', () => {
    const answer =
      'From parking.md and handbook.md: the office opens at nine and closes at five (handbook.md).';
    expect(fileCitations(answer, [handbook, { ...handbook, text: 'Another passage.' }, parking])).toEqual([
      {
        type: 'file_citation',
        index: answer.indexOf('parking.md') + 10,
        file_id: 'file-2',
        filename: 'parking.md',
      },
      {
        type: 'file_citation',
        index: answer.indexOf('handbook.md') + 11,
        file_id: 'file-1',
        filename: 'handbook.md',
      },
    ]);
  });
});
