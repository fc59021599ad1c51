"""Program-kind zero-shot: one executor call with the question body and the answer
rule; the completion is returned as the final response (its last <answer> pair is the
answer). Code items get their source's reference prompt."""


def solve(question, llm, python):
    if question.kind == "code":
        return llm(question.text)
    return llm(
        question.body
        + "\n\nGive your final answer "
        + question.answer_format
        + " inside <answer></answer> tags."
    )
