//! A hand-written list of common lowercase English words for the word families
//! (`word_sorting`, `spell_backward`, `caesar_cipher`, `letter_counting`).
//!
//! Every entry is lowercase ASCII letters only, with no duplicates (a unit test checks
//! both). Lengths run from 3 to 15 letters so that every level of `spell_backward` has
//! enough words to draw from.

pub static WORDS: &[&str] = &[
    // 3 letters
    "act", "add", "age", "air", "ant", "arm", "art", "ask", "bag", "bat", "bed", "bee",
    "big", "box", "boy", "bus", "cab", "cap", "car", "cat", "cow", "cup", "cut", "day",
    "dig", "dog", "dry", "ear", "eat", "egg", "end", "eye", "fan", "far", "fit", "fix",
    "fly", "fog", "fox", "fun", "gap", "gas", "gum", "hat", "hen", "hill", "hit", "hop",
    "hot", "ice", "ink", "jam", "jar", "jet", "joy", "key", "kid", "lab", "lap", "law",
    "leg", "lid", "lip", "log", "map", "mix", "mud", "net", "new", "nut", "oak", "oil",
    "old", "owl", "pan", "pen", "pet", "pig", "pin", "pot", "ram", "red", "rib", "row",
    "rug", "run", "sad", "sea", "sip", "sky", "sun", "tap", "tea", "ten", "tin", "toe",
    "top", "toy", "van", "wax", "web", "wet", "win", "yes", "zip", "zoo",
    // 4 letters
    "area", "army", "baby", "back", "ball", "band", "bank", "barn", "bear", "bell",
    "bird", "blue", "boat", "body", "bone", "book", "cake", "calm", "camp", "card",
    "cave", "city", "coat", "cold", "cook", "corn", "crab", "dark", "deer", "desk",
    "door", "dove", "duck", "dust", "east", "farm", "fire", "fish", "flag", "food",
    "foot", "fork", "frog", "gate", "gift", "girl", "goat", "gold", "hand", "harp",
    "home", "hope", "horn", "idea", "iron", "jump", "kind", "king", "kite", "lake",
    "lamp", "leaf", "lion", "loud", "mild", "milk", "moon", "nest", "news", "nose",
    "palm", "park", "pear", "pine", "pond", "rain", "road", "rock", "roof", "room",
    "rope", "salt", "sand", "seed", "ship", "shoe", "silk", "snow", "soap", "song",
    "star", "stem", "tail", "tent", "tide", "tree", "wall", "wave", "wind", "wolf",
    "wood", "wool", "yard", "zero",
    // 5 letters
    "apple", "beach", "bread", "brick", "brush", "cabin", "candy", "chair", "chalk",
    "cloud", "coast", "crane", "dance", "dream", "eagle", "earth", "field", "flame",
    "floor", "flute", "fruit", "ghost", "glass", "grape", "grass", "heart", "honey",
    "horse", "house", "jelly", "juice", "knife", "lemon", "light", "magic", "mango",
    "metal", "money", "mouse", "music", "night", "ocean", "olive", "onion", "paint",
    "paper", "peach", "pearl", "piano", "plant", "plate", "quiet", "radio", "river",
    "robot", "salad", "sheep", "shell", "smile", "snake", "sound", "spoon", "stone",
    "storm", "sugar", "table", "tiger", "toast", "tooth", "torch", "tower", "train",
    "truck", "water", "whale", "wheel", "world", "zebra",
    // 6 letters
    "anchor", "animal", "autumn", "basket", "bottle", "bridge", "butter", "button",
    "camera", "candle", "carpet", "castle", "cheese", "cherry", "circle", "cookie",
    "copper", "cotton", "desert", "dinner", "dragon", "engine", "farmer", "finger",
    "flower", "forest", "friend", "garden", "ginger", "guitar", "hammer", "island",
    "jacket", "jungle", "ladder", "letter", "listen", "market", "mirror", "monkey",
    "number", "orange", "parrot", "pencil", "pepper", "planet", "pocket", "potato",
    "rabbit", "saddle", "school", "silver", "spider", "spring", "street", "summer",
    "tomato", "travel", "turtle", "valley", "window", "winter", "yellow",
    // 7 letters
    "balloon", "blanket", "cabbage", "caravan", "century", "chicken", "compass",
    "cottage", "crystal", "diamond", "dolphin", "example", "feather", "festival",
    "harvest", "holiday", "journey", "kitchen", "lantern", "library", "machine",
    "meadow", "morning", "mountain", "musical", "network", "octopus", "orchard",
    "painter", "passage", "penguin", "picture", "pyramid", "rainbow", "sandwich",
    "science", "station", "teacher", "thunder", "tractor", "trumpet", "village",
    "volcano", "weather", "whistle",
    // 8 letters
    "airplane", "alphabet", "backpack", "birthday", "building", "calendar", "children",
    "chimney", "chocolate", "daughter", "dinosaur", "elephant", "envelope", "evening",
    "exercise", "football", "hospital", "kangaroo", "language", "magazine", "mushroom",
    "notebook", "painting", "pavement", "platform", "question", "sailboat", "shoulder",
    "squirrel", "strength", "sunshine", "treasure", "umbrella", "vacation", "woodland",
    // 9 letters
    "adventure", "astronaut", "beautiful", "butterfly", "carpenter", "crocodile",
    "direction", "education", "fireplace", "furniture", "hurricane", "important",
    "invention", "lighthouse", "macaroni", "nightmare", "orchestra", "pineapple",
    "restaurant", "scientist", "snowflake", "spaceship", "telephone", "waterfall",
    "wonderful",
    // 10 and 11 letters
    "basketball", "blackboard", "calculator", "chocolates", "collection", "commander",
    "confidence", "dictionary", "experiment", "friendship", "generation", "government",
    "helicopter", "historical", "instrument", "motorcycle", "newspaper", "playground",
    "population", "protection", "strawberry", "submarine", "television", "thermometer",
    "tournament", "underground", "watermelon", "grasshopper", "imagination",
    "independent", "information", "opportunity", "temperature", "observatory",
    // 12 letters and more
    "architecture", "championship", "conversation", "encyclopedia", "neighborhood",
    "photographer", "presentation", "refrigerator", "relationship", "transparent",
    "construction", "astonishment", "disappearing", "entertainment", "environmental",
    "extraordinary", "international", "communication", "understanding",
    "responsibility", "infrastructure", "administration", "representative",
    "multiplication", "transformation", "accomplishment",
];

#[cfg(test)]
mod tests {
    use super::WORDS;

    #[test]
    fn lowercase_ascii_and_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for w in WORDS {
            assert!(w.len() >= 3 && w.bytes().all(|b| b.is_ascii_lowercase()), "{w}");
            assert!(seen.insert(*w), "duplicate {w}");
        }
        assert!(WORDS.len() >= 300, "{}", WORDS.len());
    }
}
