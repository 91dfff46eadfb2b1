import { getMetadataStorage, ValidationError, ValidationTypes } from 'class-validator';

/**
 * What class-validator lets through and a DTO never means: `@ValidateNested` walks into arrays
 * wherever they appear, so `{"claims": [[{...}]]}` (an array where each claim is declared as an
 * object) validated as if the inner objects were the claims, and reached the service as arrays.
 * Here, every position a `@ValidateNested` property declares as an object (the value itself, or
 * each element with `each: true` or an array-typed property) must hold a non-array object;
 * otherwise a `nestedValidation` failure at that position ("claims[0] must be a JSON object").
 * Applied by the one validation pipe to every DTO, after class-validator's own rules passed.
 */
export function nestedShapeErrors(dto: object): ValidationError[] {
  const errors: ValidationError[] = [];
  const record = dto as Record<string, unknown>;
  const nested = getMetadataStorage()
    .getTargetValidationMetadatas(dto.constructor, '', true, false)
    .filter((metadata) => metadata.type === ValidationTypes.NESTED_VALIDATION);
  for (const property of new Set(nested.map((metadata) => metadata.propertyName))) {
    const value = record[property];
    if (value === undefined || value === null) continue;
    const declaredArray =
      nested.some((metadata) => metadata.propertyName === property && metadata.each) ||
      Reflect.getMetadata?.('design:type', dto, property) === Array;
    if (declaredArray && !Array.isArray(value)) {
      errors.push(failure(property, value));
      continue;
    }
    const children: ValidationError[] = [];
    const positions: [string, unknown][] =
      declaredArray && Array.isArray(value)
        ? value.map((item, index) => [String(index), item])
        : [['', value]];
    for (const [index, item] of positions) {
      const error = Array.isArray(item)
        ? failure(index, item)
        : typeof item === 'object' && item !== null
          ? withChildren(index, item, nestedShapeErrors(item))
          : undefined;
      if (error) children.push(error);
    }
    if (children.length === 0) continue;
    // A failure on the property itself carries no index: lift it to the property's own error.
    const own = children.find((child) => child.property === '');
    errors.push(own ? { ...own, property } : withChildren(property, value, children)!);
  }
  return errors;
}

function failure(property: string, value: unknown): ValidationError {
  return Object.assign(new ValidationError(), {
    property,
    value,
    constraints: { nestedValidation: `${property} must be a JSON object` },
    children: [],
  });
}

function withChildren(
  property: string,
  value: unknown,
  children: ValidationError[],
): ValidationError | undefined {
  if (children.length === 0) return undefined;
  return Object.assign(new ValidationError(), { property, value, constraints: {}, children });
}
