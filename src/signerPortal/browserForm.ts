// What the signing page runs of the form's rules: the server's own code (src/documents/form.ts, src/fields), bundled for
// the browser by formBundle.ts, so that the page shows, hides, computes and checks exactly as signing will.
export { formOf } from '../documents/form';
export { fillForm } from '../fields/form';
export { selectionFieldTypes } from '../fields/types';
