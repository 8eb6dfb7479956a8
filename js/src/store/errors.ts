/** The store errors (`store.*`): the core's, one class in every entry point. */

export { StoreError, StoreSchemaMissingError } from "../errors.js";
