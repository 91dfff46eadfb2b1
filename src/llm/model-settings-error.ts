/** A model setting that is not valid; the message names the field (`model.…`). */
export class ModelSettingsError extends Error {}
