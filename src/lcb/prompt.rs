//! LiveCodeBench's code-generation prompt (system message; `### Question:`,
//! `### Format:` with or without starter code, `### Answer:`) and its code extraction
//! (the text between the last two lines that contain triple backticks).

use super::Problem;
use crate::executor::Message;

/// The system message LiveCodeBench uses for code generation.
pub const SYSTEM_MESSAGE: &str = "You are an expert Python programmer. You will be given a question (problem specification) and will generate a correct Python program that matches the specification and passes all tests.";

const FORMAT_STARTER: &str = "### Format: Use the starter code below to write your solution, and enclose your code within delimiters.";
const FORMAT_STDIN: &str = "### Format: Read the input from standard input, solve the problem and write the answer to standard output (do not test directly on the sample inputs). Enclose your code within delimiters as shown below. Make sure that when the Python program runs, it reads the input, runs the algorithm and writes the output to STDOUT.";
const ANSWER: &str = "### Answer: (use the provided format with backticks)";

/// The user message for `problem`.
pub fn user_prompt(problem: &Problem) -> String {
    let mut s = format!("### Question:\n{}\n\n", problem.question_content);
    if problem.starter_code.is_empty() {
        s.push_str(FORMAT_STDIN);
        s.push_str("\n```python\n# YOUR CODE HERE\n```\n\n");
    } else {
        s.push_str(FORMAT_STARTER);
        s.push_str("\n```python\n");
        s.push_str(&problem.starter_code);
        s.push_str("\n```\n\n");
    }
    s.push_str(ANSWER);
    s.push_str("\n\n");
    s
}

/// System and user messages for `problem`.
pub fn messages(problem: &Problem) -> Vec<Message> {
    vec![
        Message::system(SYSTEM_MESSAGE),
        Message::user(user_prompt(problem)),
    ]
}

/// The code of a model response: the lines strictly between the last two lines that
/// contain "```". `None` when fewer than two such lines exist (LiveCodeBench grades
/// that as an empty program).
pub fn extract_code(response: &str) -> Option<String> {
    let lines: Vec<&str> = response.split('\n').collect();
    let fences: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.contains("```"))
        .map(|(i, _)| i)
        .collect();
    if fences.len() < 2 {
        return None;
    }
    let (a, b) = (fences[fences.len() - 2], fences[fences.len() - 1]);
    Some(lines[a + 1..b].join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extraction_takes_the_last_block() {
        let r = "intro\n```python\nprint(1)\n```\nthen\n```python\nprint(2)\nprint(3)\n```\nbye";
        assert_eq!(extract_code(r).unwrap(), "print(2)\nprint(3)");
        assert_eq!(extract_code("```\nx\n"), None);
        assert_eq!(extract_code("no code"), None);
    }
}
