// Words of the messages people read.

/** "a signer", "an approver", "an admin": the noun with its indefinite article (our nouns start as they sound). */
export const withArticle = (noun: string) => `${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun}`;
