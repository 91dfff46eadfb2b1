import { Type } from 'class-transformer';
import { IsArray, IsString, ValidateNested } from 'class-validator';
import { ApiValidationPipe } from './validation.pipe.js';

class Inner {
  @IsString()
  name!: string;
}

/** A list of nested objects, as the bulk claims body declares it (`each: true`). */
class Bulk {
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => Inner)
  claims!: Inner[];
}

/** One nested object, and a list of them declared by its type only (no `each`). */
class Outer {
  @ValidateNested()
  @Type(() => Inner)
  inner!: Inner;

  @ValidateNested()
  @Type(() => Inner)
  list!: Inner[];
}

describe('the validation pipe with nested DTOs', () => {
  const pipe = new ApiValidationPipe();
  const body = (metatype: new () => unknown) => ({ type: 'body', metatype }) as const;
  const claim = { name: 'u1' };

  it.each([
    ['an array of claims in place of a claim', { claims: [[claim]] }, 'claims[0] must be a JSON object'],
    ['an array later in the list', { claims: [claim, [claim]] }, 'claims[1] must be a JSON object'],
    ['an empty array in place of a claim', { claims: [[]] }, 'claims[0] must be a JSON object'],
  ])('refuses %s (400 invalid_request)', async (_, value, message) => {
    await expect(pipe.transform(value, body(Bulk))).rejects.toMatchObject({
      code: 'invalid_request',
      message,
    });
  });

  it('refuses an array where one nested object is declared, and arrays inside a declared list', async () => {
    await expect(pipe.transform({ inner: [{ name: 'a' }], list: [] }, body(Outer))).rejects.toMatchObject({
      code: 'invalid_request',
      message: 'inner must be a JSON object',
    });
    await expect(
      pipe.transform({ inner: { name: 'a' }, list: [[{ name: 'b' }]] }, body(Outer)),
    ).rejects.toMatchObject({ code: 'invalid_request', message: 'list[0] must be a JSON object' });
  });

  it('builds the DTOs of well-shaped bodies', async () => {
    const bulk = (await pipe.transform({ claims: [claim] }, body(Bulk))) as Bulk;
    expect(bulk.claims).toHaveLength(1);
    expect(bulk.claims[0]).toBeInstanceOf(Inner);
    const outer = (await pipe.transform(
      { inner: { name: 'a' }, list: [{ name: 'b' }] },
      body(Outer),
    )) as Outer;
    expect(outer.inner).toBeInstanceOf(Inner);
    expect(outer.list[0]).toBeInstanceOf(Inner);
  });
});
