import { matchingCall, nameWords } from './offline-tool-match.js';

const WEATHER = {
  name: 'get_weather',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
};

describe('offline tool matching', () => {
  it('splits names on underscores, dashes and camelCase, leaving filler words out', () => {
    expect(nameWords('get_current_weather')).toEqual(['current', 'weather']);
    expect(nameWords('getCurrentWeather')).toEqual(['current', 'weather']);
    expect(nameWords('set-the-alarm')).toEqual(['alarm']);
    expect(nameWords('get')).toEqual([]);
  });

  it('calls the first tool sharing a word with the message, the place after "in" as its string', () => {
    expect(matchingCall([WEATHER], "What's the weather like in San Francisco?")).toEqual({
      tool: 'get_weather',
      arguments: { location: 'San Francisco' },
    });
  });

  it('falls back to "example" for strings when the message names no place, and matches plurals', () => {
    const stocks = {
      name: 'lookupStock',
      parameters: { type: 'object', properties: { symbol: { type: 'string' } } },
    };
    expect(matchingCall([WEATHER, stocks], 'Show me stocks')).toEqual({
      tool: 'lookupStock',
      arguments: { symbol: 'example' },
    });
  });

  it('calls nothing when no name word is in the message', () => {
    expect(matchingCall([WEATHER, { name: 'get', parameters: {} }], 'Get me the news')).toBeUndefined();
  });
});
