//! Word lists written for this project: given names and the facts `needle_haystack`
//! states about them (attribute, sentence template, question, possible values).

/// Given names from many languages, all distinct (checked by a unit test).
pub const NAMES: &[&str] = &[
    "Abebe", "Adaeze", "Aiko", "Alejandro", "Amara", "Anouk", "Arjun", "Astrid", "Aurelio",
    "Ayesha", "Bartosz", "Beatriz", "Bjorn", "Bongani", "Brigid", "Caius", "Camila", "Chidi",
    "Chiara", "Dagny", "Dariusz", "Delphine", "Dmitri", "Dolores", "Ebba", "Efua", "Eitan",
    "Elif", "Emeka", "Esperanza", "Farid", "Fenna", "Folake", "Gaspard", "Giedre", "Goran",
    "Greta", "Hamid", "Hana", "Heikki", "Hiroshi", "Ilse", "Imani", "Ines", "Ingrid", "Isidro",
    "Jarrah", "Jasna", "Joaquin", "Jovana", "Kaito", "Kalani", "Kasia", "Kemal", "Kiri",
    "Kofi", "Lars", "Laila", "Leocadia", "Lorcan", "Lucinda", "Mads", "Mahsa", "Malik",
    "Marisol", "Mateus", "Meera", "Milos", "Mireille", "Nadia", "Naveen", "Nerys", "Niamh",
    "Nikolai", "Nkechi", "Oisin", "Olamide", "Oskar", "Paloma", "Pavel", "Priya", "Quentin",
    "Radek", "Rafaela", "Rania", "Rohan", "Rosalind", "Saoirse", "Selin", "Seun", "Sigrid",
    "Soren", "Sunita", "Tamsin", "Tariq", "Teodora", "Thabo", "Tiago", "Tomasz", "Ulla",
    "Umar", "Valentina", "Vesna", "Viggo", "Wanjiru", "Wiktor", "Xiomara", "Yara", "Yusuf",
    "Zainab", "Zdenek", "Zofia", "Ottilie", "Anselm", "Berit", "Cosimo", "Dalia", "Evander",
    "Femi", "Gunnar", "Halima", "Ivo", "Jelena", "Kwame", "Liesel", "Mbali", "Noor", "Orla",
];

/// How a fact's value is drawn.
pub enum Values {
    Words(&'static [&'static str]),
    /// An integer drawn uniformly from the inclusive range.
    Number(u32, u32),
}

/// One kind of fact: `statement` and `question` contain `{N}` (the name) and the
/// statement `{V}` (the value) and possibly `{a}` (the indefinite article for it).
pub struct Attribute {
    pub key: &'static str,
    pub statement: &'static str,
    pub question: &'static str,
    pub values: Values,
}

pub const ATTRIBUTES: &[Attribute] = &[
    Attribute {
        key: "favourite_fruit",
        statement: "{N}'s favourite fruit is the {V}.",
        question: "What is {N}'s favourite fruit?",
        values: Values::Words(&[
            "mango", "apricot", "plum", "kiwi", "papaya", "cherry", "lychee", "guava", "fig",
            "quince", "pear", "lime", "melon", "peach", "persimmon", "pomegranate",
        ]),
    },
    Attribute {
        key: "pet",
        statement: "{N} keeps {a} {V} as a pet.",
        question: "What animal does {N} keep as a pet?",
        values: Values::Words(&[
            "hamster", "parrot", "tortoise", "ferret", "rabbit", "gecko", "goldfish", "iguana",
            "canary", "chinchilla", "beagle", "axolotl", "hedgehog", "cockatoo",
        ]),
    },
    Attribute {
        key: "home_city",
        statement: "{N} lives in {V}.",
        question: "In which city does {N} live?",
        values: Values::Words(&[
            "Lisbon", "Nairobi", "Oslo", "Quito", "Hanoi", "Perth", "Tbilisi", "Dakar", "Lima",
            "Riga", "Osaka", "Porto", "Accra", "Bergen", "Cusco", "Tallinn",
        ]),
    },
    Attribute {
        key: "favourite_colour",
        statement: "The colour {N} likes best is {V}.",
        question: "Which colour does {N} like best?",
        values: Values::Words(&[
            "teal", "crimson", "amber", "indigo", "olive", "maroon", "violet", "ochre",
            "turquoise", "silver", "coral", "navy", "lavender", "saffron",
        ]),
    },
    Attribute {
        key: "instrument",
        statement: "{N} plays the {V} in a small band.",
        question: "Which instrument does {N} play?",
        values: Values::Words(&[
            "cello", "oboe", "banjo", "harp", "trumpet", "ukulele", "flute", "bassoon",
            "accordion", "sitar", "viola", "clarinet", "mandolin", "trombone",
        ]),
    },
    Attribute {
        key: "locker_number",
        statement: "The locker assigned to {N} is number {V}.",
        question: "What is the number of the locker assigned to {N}?",
        values: Values::Number(100, 999),
    },
    Attribute {
        key: "sport",
        statement: "Every weekend {N} practises {V}.",
        question: "Which sport does {N} practise every weekend?",
        values: Values::Words(&[
            "fencing", "rowing", "cricket", "curling", "judo", "hockey", "archery", "badminton",
            "surfing", "squash", "handball", "lacrosse",
        ]),
    },
    Attribute {
        key: "job",
        statement: "By profession {N} is {a} {V}.",
        question: "What is {N}'s profession?",
        values: Values::Words(&[
            "baker", "pilot", "welder", "surgeon", "librarian", "chemist", "plumber", "tailor",
            "carpenter", "florist", "dentist", "sculptor", "geologist", "translator",
        ]),
    },
    Attribute {
        key: "birth_year",
        statement: "{N} was born in {V}.",
        question: "In which year was {N} born?",
        values: Values::Number(1940, 2010),
    },
    Attribute {
        key: "hobby",
        statement: "In the evenings {N} enjoys {V}.",
        question: "What does {N} enjoy in the evenings?",
        values: Values::Words(&[
            "knitting", "chess", "pottery", "gardening", "birdwatching", "origami", "juggling",
            "climbing", "baking", "sailing", "calligraphy", "woodcarving",
        ]),
    },
];

/// Sentences that state no fact about anyone (used as extra distraction).
pub const FILLERS: &[&str] = &[
    "The morning train was a few minutes late.",
    "Rain was expected later in the week.",
    "The library closes early on public holidays.",
    "A new bakery opened near the station.",
    "The committee met twice in the spring.",
    "Most of the streets were repaved last year.",
    "The river was unusually high after the storm.",
    "Tickets for the concert sold out quickly.",
    "The old bridge is now open only to cyclists.",
    "Several trees in the park were planted by volunteers.",
    "The museum added a room for local maps.",
    "A quiz night takes place every second Thursday.",
    "The ferry timetable changes in the winter.",
    "Nobody remembered who had ordered the extra chairs.",
    "The market sells mostly vegetables on Mondays.",
    "The lights in the hall were replaced in autumn.",
];
