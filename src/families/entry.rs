//! Instances given as JSON records, scored: the input lines of `hrl tasks score`
//! ([`super::score_line`]) and the entries a caller hands back (the Python package's
//! `score`). A record is an [`Instance`] object (its eight fields; any other field is
//! ignored), its family must be registered and its level in range; otherwise the
//! record is malformed and says why, never a silent 0.

use serde_json::Value;

use super::{Family, FamilyError, Instance, Level, ScoreMode, Scored, score_response};

/// The instance a JSON record holds, with its family.
pub fn parse_entry(entry: Value) -> Result<(&'static dyn Family, Instance), FamilyError> {
    let not_instance =
        |e: serde_json::Error| FamilyError::MalformedEntry(format!("not an instance: {e}"));
    // `metadata` is moved into the instance as it is: deserialising a `Value` field
    // from a `Value` would rebuild it node by node.
    let (inst, metadata) = match entry {
        Value::Object(mut m) => {
            let metadata = m.get_mut("metadata").map(Value::take);
            let inst: Instance = serde_json::from_value(Value::Object(m)).map_err(not_instance)?;
            (inst, metadata)
        }
        other => (serde_json::from_value(other).map_err(not_instance)?, None),
    };
    let inst = Instance {
        metadata: metadata.unwrap_or(inst.metadata),
        ..inst
    };
    let family = super::get(&inst.family)?;
    Level::new(inst.level).map_err(|e| FamilyError::MalformedEntry(format!("`level`: {e}")))?;
    Ok((family, inst))
}

/// Score `response` against the instance a JSON record holds, under `mode`.
pub fn score_entry(entry: Value, response: &str, mode: ScoreMode) -> Result<Scored, FamilyError> {
    let (family, inst) = parse_entry(entry)?;
    Ok(score_response(family, &inst, response, mode))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record() -> Value {
        let inst = super::super::generate(
            super::super::get("gcd").unwrap(),
            Level::new(2).unwrap(),
            3,
            1,
        );
        serde_json::to_value(&inst).unwrap()
    }

    #[test]
    fn a_record_is_scored_as_given_and_extra_fields_are_ignored() {
        let mut v = record();
        let gold = v["answer"].as_str().unwrap().to_string();
        v["response"] = json!("ignored");
        let (_, inst) = parse_entry(v.clone()).unwrap();
        assert_eq!(inst.metadata, record()["metadata"]);
        let tagged = format!("<answer>{gold}</answer>");
        assert_eq!(
            score_entry(v.clone(), &tagged, ScoreMode::Strict)
                .unwrap()
                .score,
            1.0
        );
        assert_eq!(
            score_entry(v.clone(), &gold, ScoreMode::Strict)
                .unwrap()
                .score,
            0.0
        );
        assert_eq!(score_entry(v, &gold, ScoreMode::Bare).unwrap().score, 1.0);
    }

    #[test]
    fn malformed_records_say_what_is_wrong() {
        let msg = |v: Value| parse_entry(v).err().unwrap().to_string();
        assert!(msg(json!([1])).starts_with("not an instance: invalid type"));
        let mut v = record();
        v.as_object_mut().unwrap().remove("metadata");
        assert_eq!(msg(v), "not an instance: missing field `metadata`");
        let mut v = record();
        v["family"] = json!("nope");
        assert!(msg(v).contains("unknown family `nope`"));
        let mut v = record();
        v["level"] = json!(7);
        assert_eq!(msg(v), "`level`: level 7 is out of range: levels are 1..=5");
    }
}
